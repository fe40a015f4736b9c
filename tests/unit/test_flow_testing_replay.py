"""Replay: timeline records (as the runtime writes them) back into turns, and the first turn that differs."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from flows.engine import catch_up, step
from flows.load import load
from flows.dialog import Update
from flows.testing.cases import parse_cases
from flows.testing.replay import replay
from flows.testing.runner import run_cases
from server.runtime import timeline
from server.services.replay import recorded_dialogs

ROOT = Path(__file__).resolve().parents[2]
DOC = {
    "format": "botflow/v1", "id": "shop", "title": "Shop", "start": "menu",
    "settings": {"session_ttl": 3600, "reminder": {"after": 60, "text": "Still there?"}},
    "states": [
        {"id": "menu", "say": [{"text": "Pick", "buttons": [[{"text": "Tea", "payload": "tea"}]]}]},
        {"id": "photo", "say": [{"text": "Send a photo"}], "input": {"type": "attachment", "kinds": ["image"],
                                                                      "save_as": "pic"}},
        {"id": "pay", "say": [{"text": "Pay please"}]},
        {"id": "done", "final": True, "say": [{"text": "Paid {amount}"}]},
    ],
    "transitions": [
        {"id": "t_tea", "from": "menu", "to": "photo", "on": "button", "payload": "tea"},
        {"id": "t_pic", "from": "photo", "to": "pay", "on": "input"},
        {"id": "t_paid", "from": "pay", "to": "done", "on": "event", "name": "paid"},
    ],
}


def record_live(flow, updates):
    """Records exactly as the runtime's dispatch writes them: one per turn, timers at their due time."""
    records, session, now = [], None, 1_800_000_000.0
    for gap, update in updates:
        now += gap
        if update.kind == "tick":
            for result in catch_up(flow, session, now):
                before = session.state if session else None
                session = result.dialog
                records.append(timeline.record(now, update, before, result,
                                               session.to_dict() if session else None))
            continue
        before = session.state if session else None
        result = step(flow, session, update, now)
        session = result.dialog
        records.append(timeline.record(now, update, before, result, session.to_dict() if session else None))
    return records


LIVE = [(0, Update.message("hi")), (1, Update.button("tea")), (90, Update.tick()),
        (5, Update.message("look", [{"type": "image", "payload": {"url": "x"}}])),
        (2, Update.event("paid", {"amount": 500}))]


def test_records_come_back_as_the_updates_that_made_them() -> None:
    flow = load(DOC)
    dialog = recorded_dialogs("u1", record_live(flow, LIVE))
    assert [t.update for t in dialog.turns] == [
        {"text": "hi"}, {"payload": "tea"}, {"idle": 0},
        {"attachment": {"type": "image", "payload": {}}, "text": "look"},
        {"event": "paid", "payload": {"amount": 500}}]
    assert dialog.turns[2].replies == ["Still there?"] and dialog.turns[-1].replies == ["Paid 500"]
    assert replay(flow, [dialog])["differ"] == 0


def test_a_change_is_reported_where_the_dialogs_part_and_as_a_test() -> None:
    flow = load(DOC)
    recorded = [recorded_dialogs(f"u{i}", record_live(flow, LIVE[: 2 + i])) for i in range(3)]
    changed = copy.deepcopy(DOC)
    changed["settings"]["reminder"]["text"] = "Hello?"
    report = replay(load(changed), recorded)
    assert report["dialogs"] == 3 and report["differ"] == 2 and report["same"] == 1
    assert report["groups"] == [{"state": "photo", "expected_transition": None, "actual_transition": None,
                                 "count": 2, "users": ["u1", "u2"]}]
    first = report["differing"][0]
    assert first["divergence"]["expected"]["replies"] == ["Still there?"]
    assert first["divergence"]["actual"]["replies"] == ["Hello?"]
    # The recorded dialog as a test: passes where it was recorded, fails on the change at the same step.
    case = first["test"]
    assert run_cases(flow, parse_cases([case]))["passed"] == 1
    failing = run_cases(load(changed), parse_cases([case]))["results"][0]
    assert failing["failure"]["expected"]["replies"] == ["Still there?"]


def test_a_timeline_capped_mid_dialog_starts_at_the_next_fresh_dialog() -> None:
    flow = load(DOC)
    records = record_live(flow, LIVE + [(1, Update.message("again")), (1, Update.button("tea"))])
    dialog = recorded_dialogs("u", records[2:])
    assert [t.update for t in dialog.turns] == [{"text": "again"}, {"payload": "tea"}]
    assert replay(flow, [dialog])["differ"] == 0


def test_every_example_replays_its_own_generated_dialogs_unchanged() -> None:
    from flows.testing.generate import generate
    from flows.testing.updates import parse_update

    for path in sorted((ROOT / "examples").glob("*.json")):
        flow = load(json.loads(path.read_text(encoding="utf-8")))
        dialogs = []
        for i, case in enumerate(generate(flow)["tests"]):
            updates = []
            for s in case["steps"]:
                update, idle = parse_update(s["update"])
                updates.append((idle, update))
            dialogs.append(recorded_dialogs(str(i), record_live(flow, updates)))
        assert replay(flow, dialogs)["differ"] == 0, path.name


def test_dialogs_that_cannot_be_replayed_are_listed_with_the_reason() -> None:
    flow = load(DOC)
    records = record_live(flow, LIVE)
    capped = recorded_dialogs("capped", records[2:])  # starts mid-dialog and never starts afresh
    masked_records = copy.deepcopy(records)
    masked_records[0]["m"] = 1
    masked = recorded_dialogs("masked", masked_records)
    whole = recorded_dialogs("whole", records)
    result = replay(flow, [capped, masked, whole])
    assert result["dialogs"] == 1 and result["not_replayed"] == 2
    reasons = {s["user"]: s["reason"] for s in result["skipped"]}
    assert "cannot be replayed from its start" in reasons["capped"]
    assert "masked" in reasons["masked"]
