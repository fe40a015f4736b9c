"""Validation API, the structural checks (no_start, unknown_state, duplicate_id) and whole-flow properties."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from flows.load import load
from flows.model import Flow
from flows.validate import CHECKS, SEVERITIES, Issue, has_errors, validate, validation_result
from strategies import flow_documents

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def make(states: list[dict[str, Any]], transitions: list[dict[str, Any]] = (), **top: Any) -> Flow:
    """A flow from a small document; `start` defaults to the first state."""
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "t", "title": "T",
                           "start": states[0]["id"] if states else "", "states": states,
                           "transitions": list(transitions)}
    doc.update(top)
    return load(doc)


def ask(state_id: str, key: str | None = None) -> dict[str, Any]:
    return {"id": state_id, "say": [{"text": "?"}], "input": {"type": "text", "save_as": key or state_id}}


def end(state_id: str) -> dict[str, Any]:
    return {"id": state_id, "final": True, "say": [{"text": "Bye"}]}


def go(tr_id: str, source: str, target: str, on: str = "input", **extra: Any) -> dict[str, Any]:
    return {"id": tr_id, "from": source, "to": target, "on": on, **extra}


def codes(flow: Flow, code: str) -> list[Issue]:
    return [item for item in validate(flow) if item.code == code]


GOOD = dict(states=[ask("a"), end("done")], transitions=[go("t1", "a", "done")])


# --- API -------------------------------------------------------------------------------------------

def test_issue_is_frozen_and_serialises_to_the_api_shape() -> None:
    item = Issue("dead_end", "error", "State \"a\" is stuck.", ("a",), ("t1", "t2"))
    assert item.to_dict() == {"code": "dead_end", "severity": "error", "message": "State \"a\" is stuck.",
                              "states": ["a"], "transitions": ["t1", "t2"], "params": {}}
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.code = "other"  # type: ignore[misc]


def test_validation_result_is_ok_with_warnings_only() -> None:
    flow = make([ask("a"), end("done")], [go("t1", "a", "done"), go("t2", "done", "a", "button", payload="x")])
    result = validation_result(flow)
    assert result["ok"] is True
    assert [i["code"] for i in result["issues"]] == ["final_has_exit"]
    assert result["issues"][0]["severity"] == "warning"
    assert json.loads(json.dumps(result)) == result


def test_validation_result_is_not_ok_with_an_error() -> None:
    flow = make([ask("a"), ask("b"), end("done")], [go("t1", "a", "done")])
    result = validation_result(flow)
    assert result["ok"] is False
    assert has_errors(validate(flow))
    assert not has_errors([Issue("final_has_exit", "warning", "m")])


def test_clean_flow_has_no_issues() -> None:
    assert validate(make(**GOOD)) == []


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_shipped_examples_have_no_issues(path: Path) -> None:
    flow = load(json.loads(path.read_text(encoding="utf-8")))
    assert [i.to_dict() for i in validate(flow)] == []


def test_registration_example_is_clean() -> None:
    flow = load(json.loads((EXAMPLES / "registration.json").read_text(encoding="utf-8")))
    assert validation_result(flow) == {"ok": True, "issues": []}


def test_errors_come_before_warnings_in_check_order() -> None:
    flow = make([ask("a"), end("done"), ask("orphan")],
                [go("t1", "a", "done"), go("t2", "done", "a", "button", payload="x"),
                 go("t3", "orphan", "done")])
    found = validate(flow)
    assert [i.code for i in found] == ["unreachable_state", "final_has_exit"]
    order = [check.__name__.removeprefix("check_") for check in CHECKS]
    assert sorted(order) == sorted(SEVERITIES)
    severities = [SEVERITIES[name] for name in order]
    assert severities == sorted(severities)  # "error" < "warning": every error check runs first


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flow_documents())
def test_any_loadable_document_validates_deterministically(doc: dict[str, Any]) -> None:
    flow = load(doc)
    first = validate(flow)
    assert validate(load(doc)) == first
    state_ids = {s.id for s in flow.states}
    referenced = {flow.start} | {t.source for t in flow.transitions} | {t.target for t in flow.transitions}
    transition_ids = {t.id for t in flow.transitions}
    for item in first:
        assert item.severity == SEVERITIES[item.code]
        assert item.message and item.message[-1] in ".?)"
        assert set(item.states) <= state_ids | referenced
        assert set(item.transitions) <= transition_ids


# --- no_start -----------------------------------------------------------------------------------

@pytest.mark.parametrize("start", ["", None])
def test_no_start_when_start_is_empty_or_missing(start: str | None) -> None:
    doc = {"format": "botflow/v1", "id": "t", "title": "T", "states": [ask("a"), end("done")],
           "transitions": [go("t1", "a", "done")]}
    if start is not None:
        doc["start"] = start
    found = validate(load(doc))
    assert [(i.code, i.severity, i.states, i.transitions) for i in found] == [("no_start", "error", (), ())]
    assert '"start"' in found[0].message


def test_no_start_absent_when_start_is_set() -> None:
    assert codes(make(**GOOD), "no_start") == []


# --- unknown_state ------------------------------------------------------------------------------

def test_unknown_start_names_the_missing_id() -> None:
    found = codes(make([ask("a"), end("done")], [go("t1", "a", "done")], start="nowhere"), "unknown_state")
    assert [(i.severity, i.states, i.transitions) for i in found] == [("error", ("nowhere",), ())]
    assert "start" in found[0].message


def test_unknown_target_names_the_missing_id_and_every_referring_transition() -> None:
    flow = make([ask("a"), ask("ask_phone"), end("done")],
                [go("t1", "a", "ask_phon"), go("t2", "a", "ask_phon", "button", payload="p"),
                 go("t3", "ask_phone", "done"), go("t4", "ghost", "done", "button", payload="q")])
    found = codes(flow, "unknown_state")
    assert [(i.states, i.transitions) for i in found] == [(("ask_phon",), ("t1", "t2")), (("ghost",), ("t4",))]
    assert 'did you mean "ask_phone"' in found[0].message


def test_start_and_transitions_naming_one_missing_id_make_one_issue() -> None:
    flow = make([ask("a"), end("done")], [go("t1", "a", "b"), go("t2", "a", "done", "button", payload="x")],
                start="b")
    found = codes(flow, "unknown_state")
    assert [(i.states, i.transitions) for i in found] == [(("b",), ("t1",))]


def test_unknown_state_absent_when_all_names_resolve() -> None:
    assert codes(make(**GOOD), "unknown_state") == []


# --- duplicate_id -------------------------------------------------------------------------------

def test_duplicate_state_ids() -> None:
    flow = make([ask("a"), end("done"), end("done")], [go("t1", "a", "done")])
    found = codes(flow, "duplicate_id")
    assert [(i.severity, i.states, i.transitions) for i in found] == [("error", ("done",), ())]
    assert "2 states" in found[0].message


def test_duplicate_transition_ids_name_the_transition_and_its_sources() -> None:
    flow = make([ask("a"), ask("b"), end("done")],
                [go("t1", "a", "b"), go("t1", "b", "done"), go("t2", "b", "done", "button", payload="x")])
    found = codes(flow, "duplicate_id")
    assert [(i.states, i.transitions) for i in found] == [(("a", "b"), ("t1",))]


def test_same_id_for_a_state_and_a_transition_is_not_a_duplicate() -> None:
    flow = make([ask("a"), end("done")], [go("a", "a", "done")])
    assert codes(flow, "duplicate_id") == []
