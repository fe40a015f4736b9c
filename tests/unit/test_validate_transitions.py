"""Transitions that can never fire: ambiguous_transition (error) and unreachable_transition (warning)."""
from __future__ import annotations

from typing import Any

import pytest

from flows.load import load
from flows.model import Flow
from flows.validate import Issue, validate


def make(transitions: list[dict[str, Any]], *, waits: bool = False, **top: Any) -> Flow:
    """State `s` (a menu, or with `waits` a text input with max_attempts) and final states `x`, `y`, `z`."""
    s: dict[str, Any] = {"id": "s", "say": [{"text": "?", "buttons": [[{"text": "Yes", "payload": "yes"}]]}]}
    if waits:
        s["input"] = {"type": "text", "save_as": "answer", "max_attempts": 3}
    states = [s] + [{"id": name, "final": True, "say": [{"text": "Bye"}]} for name in ("x", "y", "z")]
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "t", "title": "T", "start": "s", "states": states,
                           "transitions": transitions}
    doc.update(top)
    return load(doc)


def go(tr_id: str, on: str, target: str = "x", **extra: Any) -> dict[str, Any]:
    return {"id": tr_id, "from": "s", "to": target, "on": on, **extra}


IF = [{"var": "answer", "op": "set"}]


def named(flow: Flow, code: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return [(i.severity, i.states, i.transitions) for i in validate(flow) if i.code == code]


def issues(flow: Flow, code: str) -> list[Issue]:
    return [i for i in validate(flow) if i.code == code]


# --- ambiguous_transition -----------------------------------------------------------------------

SHADOWED = {
    "same button payload": [go("a", "button", payload="yes"), go("b", "button", "y", payload="yes")],
    "later one has an if": [go("a", "button", payload="yes"), go("b", "button", "y", payload="yes", **{"if": IF})],
    "match list contained, case and spaces ignored": [
        go("a", "text", match=["да", "Yes", "ok"]), go("b", "text", "y", match=[" YES ", "да"])],
    "same pattern": [go("a", "text", pattern="^\\d+$"), go("b", "text", "y", pattern="^\\d+$")],
    "same event": [go("a", "event", name="paid"), go("b", "event", "y", name="paid")],
    "kinds contained": [go("a", "attachment", kinds=["image", "video"]), go("b", "attachment", "y", kinds=["image"])],
    "earlier takes any attachment": [go("a", "attachment"), go("b", "attachment", "y", kinds=["file"])],
    "second else": [go("a", "else"), go("b", "else", "y")],
}


@pytest.mark.parametrize("transitions", SHADOWED.values(), ids=SHADOWED.keys())
def test_transition_shadowed_by_an_earlier_unconditional_one(transitions: list[dict[str, Any]]) -> None:
    flow = make(transitions)
    assert named(flow, "ambiguous_transition") == [("error", ("s",), ("a", "b"))]
    message = issues(flow, "ambiguous_transition")[0].message
    assert '"a"' in message and '"b"' in message


NOT_SHADOWED = {
    "earlier one has an if": [go("a", "button", payload="yes", **{"if": IF}), go("b", "button", "y", payload="yes")],
    "other payload": [go("a", "button", payload="yes"), go("b", "button", "y", payload="no")],
    "payloads differ in case": [go("a", "button", payload="yes"), go("b", "button", "y", payload="YES")],
    "match list not contained": [go("a", "text", match=["да"]), go("b", "text", "y", match=["да", "yes"])],
    "later one adds a pattern": [go("a", "text", match=["да"]), go("b", "text", "y", match=["да"], pattern="^y")],
    "other pattern": [go("a", "text", pattern="^\\d+$"), go("b", "text", "y", pattern="^\\d{2}$")],
    "other event": [go("a", "event", name="paid"), go("b", "event", "y", name="failed")],
    "kinds not contained": [go("a", "attachment", kinds=["image"]), go("b", "attachment", "y", kinds=["image", "file"])],
    "later takes any attachment": [go("a", "attachment", kinds=["image"]), go("b", "attachment", "y")],
    "text and button with one word": [go("a", "text", match=["yes"]), go("b", "button", "y", payload="yes")],
    "else after a conditional else": [go("a", "else", **{"if": IF}), go("b", "else", "y")],
}


@pytest.mark.parametrize("transitions", NOT_SHADOWED.values(), ids=NOT_SHADOWED.keys())
def test_transition_that_can_still_fire_is_not_ambiguous(transitions: list[dict[str, Any]]) -> None:
    assert named(make(transitions), "ambiguous_transition") == []


def test_second_input_after_an_unconditional_one() -> None:
    flow = make([go("a", "input"), go("b", "input", "y")], waits=True)
    assert named(flow, "ambiguous_transition") == [("error", ("s",), ("a", "b"))]


def test_inputs_guarded_in_turn_are_not_ambiguous() -> None:
    flow = make([go("a", "input", **{"if": [{"var": "answer", "op": "eq", "value": "1"}]}), go("b", "input", "y")],
                waits=True)
    assert named(flow, "ambiguous_transition") == []


def test_second_invalid_after_an_unconditional_one() -> None:
    flow = make([go("ok", "input"), go("a", "invalid", "y"), go("b", "invalid", "z")], waits=True)
    assert named(flow, "ambiguous_transition") == [("error", ("s",), ("a", "b"))]


def test_second_timeout_is_ambiguous_even_with_conditions() -> None:
    flow = make([go("a", "timeout", after=60, **{"if": IF}), go("b", "timeout", "y", after=120, **{"if": IF}),
                 go("c", "timeout", "z", after=5)])
    assert named(flow, "ambiguous_transition") == [("error", ("s",), ("a", "b")), ("error", ("s",), ("a", "c"))]
    assert "only one" in issues(flow, "ambiguous_transition")[0].message


def test_one_timeout_is_fine() -> None:
    assert named(make([go("a", "timeout", after=60), go("b", "button", "y", payload="yes")]),
                 "ambiguous_transition") == []


def test_shadowing_is_per_state() -> None:
    states = [{"id": "s", "say": [{"text": "?"}]}, {"id": "u", "say": [{"text": "?"}]},
              {"id": "x", "final": True}]
    flow = load({"format": "botflow/v1", "id": "t", "title": "T", "start": "s", "states": states,
                 "transitions": [{"id": "a", "from": "s", "to": "u", "on": "button", "payload": "go"},
                                 {"id": "b", "from": "u", "to": "x", "on": "button", "payload": "go"}]})
    assert named(flow, "ambiguous_transition") == []


# --- unreachable_transition ---------------------------------------------------------------------

def test_else_in_a_state_with_input_never_fires() -> None:
    flow = make([go("ok", "input"), go("other", "else", "y")], waits=True)
    assert named(flow, "unreachable_transition") == [("warning", ("s",), ("other",))]


def test_else_in_a_state_without_input_fires() -> None:
    assert named(make([go("a", "button", payload="yes"), go("other", "else", "y")]), "unreachable_transition") == []


def test_text_match_equal_to_a_default_command_never_fires() -> None:
    flow = make([go("a", "text", match=[" /CANCEL "]), go("b", "button", "y", payload="yes")])
    assert named(flow, "unreachable_transition") == [("warning", ("s",), ("a",))]
    message = issues(flow, "unreachable_transition")[0].message
    assert "cancel" in message and "can never fire" in message


def test_text_match_partly_taken_by_a_command_is_still_reported() -> None:
    flow = make([go("a", "text", match=["назад", "потом"])], commands={"back": {"match": ["Назад"]}})
    got = issues(flow, "unreachable_transition")
    assert [(i.states, i.transitions) for i in got] == [(("s",), ("a",))]
    assert '"назад"' in got[0].message and '"back"' in got[0].message


def test_button_payload_equal_to_a_command_never_fires() -> None:
    flow = make([go("a", "button", payload="back"), go("b", "else", "y")], commands={"back": {"match": ["back"]}})
    assert named(flow, "unreachable_transition") == [("warning", ("s",), ("a",))]


def test_match_of_a_disabled_command_is_free() -> None:
    flow = make([go("a", "text", match=["/cancel", "/start"])], commands={"cancel": None, "restart": None})
    assert named(flow, "unreachable_transition") == []


def test_input_and_invalid_need_the_states_input() -> None:
    flow = make([go("a", "input"), go("b", "invalid", "y"), go("c", "button", "z", payload="yes")])
    assert named(flow, "unreachable_transition") == [("warning", ("s",), ("a",)), ("warning", ("s",), ("b",))]


def test_invalid_needs_max_attempts() -> None:
    states = [{"id": "s", "say": [{"text": "?"}], "input": {"type": "text"}}, {"id": "x", "final": True}]
    flow = load({"format": "botflow/v1", "id": "t", "title": "T", "start": "s", "states": states,
                 "transitions": [{"id": "ok", "from": "s", "to": "x", "on": "input"},
                                 {"id": "bad", "from": "s", "to": "x", "on": "invalid"}]})
    assert named(flow, "unreachable_transition") == [("warning", ("s",), ("bad",))]


def test_ordinary_transitions_are_reachable() -> None:
    flow = make([go("ok", "input"), go("no", "invalid", "y"), go("t", "text", "z", match=["stop"]),
                 go("late", "timeout", "z", after=60)], waits=True)
    assert named(flow, "unreachable_transition") == []


@pytest.mark.parametrize("after, ttl, warned", [(1800, 1800, True), (3600, 1800, True), (1799, 1800, False)])
def test_a_timeout_not_below_session_ttl_can_never_fire(after: int, ttl: int, warned: bool) -> None:
    flow = make([go("late", "timeout", after=after), go("yes", "button", "y", payload="yes")],
                settings={"session_ttl": ttl})
    found = [i for i in validate(flow) if i.code == "unreachable_transition"]
    if warned:
        assert [(i.severity, i.transitions) for i in found] == [("warning", ("late",))]
        assert "session_ttl" in found[0].message
    else:
        assert found == []
