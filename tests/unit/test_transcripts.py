"""Golden transcripts: tests/data/transcripts/*.json replayed through step() against examples/."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine_strategies import example
from flows.engine import step
from flows.dialog import Update

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "data" / "transcripts"


def _cases() -> list[Any]:
    cases = []
    for path in sorted(TRANSCRIPTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for dialog in doc["dialogs"]:
            cases.append(pytest.param(doc["flow"], dialog, id=f"{path.stem}: {dialog['name']}"))
    return cases


def to_update(raw: dict[str, Any]) -> Update:
    """A transcript update, written like the simulator's: text, payload, event, attachment, bot_started, tick."""
    if "event" in raw:
        return Update.event(raw["event"], raw.get("payload"))
    if "payload" in raw:
        return Update.button(raw["payload"])
    if "attachment" in raw:
        return Update.message(raw.get("text"), [raw["attachment"]])
    if "text" in raw:
        return Update.message(raw["text"])
    if "bot_started" in raw:
        return Update.started(raw["bot_started"])
    if raw.get("tick") or "idle" in raw:
        return Update.tick()
    raise ValueError(f"unknown update {raw!r}")


def test_there_is_a_transcript_for_every_example():
    examples = {p.stem for p in (TRANSCRIPTS.parents[2] / "examples").glob("*.json")}
    covered = {json.loads(p.read_text(encoding="utf-8"))["flow"] for p in TRANSCRIPTS.glob("*.json")}
    assert "registration" in covered
    assert covered <= examples


@pytest.mark.parametrize("flow_name,dialog", _cases())
def test_transcript(flow_name: str, dialog: dict[str, Any]) -> None:
    flow = example(flow_name)
    session = None
    now = 1000.0
    for number, item in enumerate(dialog["steps"], 1):
        raw = item["update"]
        if "now" in item:
            now = float(item["now"])
        elif "idle" in raw:
            now += float(raw["idle"])
        else:
            now += 1.0
        result = step(flow, session, to_update(raw), now)
        session = result.dialog
        where = f"step {number} {raw}: {result.reason}"
        expect = item["expect"]
        if "state" in expect:
            assert (session.state if session else None) == expect["state"], where
        if "replies" in expect:
            assert [r.text for r in result.replies] == expect["replies"], where
        if "buttons" in expect:
            assert result.replies and result.replies[-1].buttons == expect["buttons"], where
        if "transition" in expect:
            assert result.transition == expect["transition"], where
        if "outcome" in expect:
            assert result.outcome == expect["outcome"], where
        data = session.data if session else {}
        if "data" in expect:
            if expect["data"] == {}:
                assert data == {}, where
            for key, value in expect["data"].items():
                assert data.get(key) == value, f"{where}: data[{key!r}]"
        for key in expect.get("absent", []):
            assert key not in data, where
        if "completed" in expect:
            assert result.completed is not None, where
            for key, value in expect["completed"].items():
                assert result.completed.data.get(key) == value, f"{where}: completed[{key!r}]"
        if "effects" in expect:
            assert [e.url for e in result.effects] == expect["effects"], where
