"""The engine's steps in a transcript read in Russian from their kind and params, for every kind the engine makes."""
from __future__ import annotations

import json
import re
from pathlib import Path

from engine_strategies import example
from flows.engine import step
from server.runtime import timeline
from test_transcripts import TRANSCRIPTS, to_update
from web import i18n
from web.transcript import EXPLANATIONS, KIND_WORDS, USER_KINDS, explanation, lines

ROOT = Path(__file__).resolve().parents[2]
# Kinds the engine and the runtime give a step (flows/*.py StepResult outcomes, server/runtime notes).
MADE = re.compile(r'"((?:command:)?[a-z_]+)"(?:, touched=False)?\)')


def russian(kind: str) -> str:
    i18n.set_language("ru")
    try:
        return explanation(kind, "ask_name", "start") or ""
    finally:
        i18n.set_language("en")


def test_every_explanation_reads_in_russian() -> None:
    for kind in EXPLANATIONS:
        said, english = russian(kind), explanation(kind, "ask_name", "start")
        assert said and said != english and re.search("[а-яё]", said), (kind, said)
        assert "%(" not in said


def test_every_step_kind_has_an_explanation() -> None:
    system = {kind for kind in KIND_WORDS if kind not in USER_KINDS and kind not in ("reply", "completed")}
    made = {kind for path in (ROOT / "flows").glob("*.py") for kind in MADE.findall(path.read_text())
            if kind in system | {"held", "expired"}}
    assert system <= set(EXPLANATIONS), system - set(EXPLANATIONS)
    assert {"held", "expired", "ignored", "fallback", "input_invalid"} <= made <= set(EXPLANATIONS)


def test_the_golden_dialogs_explain_every_step_in_russian() -> None:
    """Every step of the golden transcripts, recorded as the runtime does, has a Russian sentence."""
    seen = set()
    for path in sorted(TRANSCRIPTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        flow = example(doc["flow"])
        for dialog in doc["dialogs"]:
            session, now, records = None, 1000.0, []
            for item in dialog["steps"]:
                now = float(item.get("now", now + float(item["update"].get("idle", 1.0))))
                before = session.state if session else None
                result = step(flow, session, to_update(item["update"]), now)
                session = result.dialog
                records.append(timeline.record(now, to_update(item["update"]), before, result,
                                               session.to_dict() if session else None))
            i18n.set_language("ru")
            try:
                for line in lines(records):
                    if line.explains and line.text:
                        seen.add(line.kind)
                        said = line.why()
                        assert said and re.search("[а-яё]", said), (line.kind, line.text)
            finally:
                i18n.set_language("en")
    assert {"transition", "opened"} <= seen


def test_states_are_named_by_their_titles_where_they_have_one() -> None:
    i18n.set_language("ru")
    try:
        said = explanation("transition", "ask_phone", "ask_name", {"ask_name": "Имя"})
    finally:
        i18n.set_language("en")
    assert said == "Переход из «Имя» в «ask_phone»."
