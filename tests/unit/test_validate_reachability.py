"""Checks on where a dialog can go: unreachable_state, dead_end, no_path_to_final, final_has_exit, missing_cancel."""
from __future__ import annotations

from typing import Any

from flows.load import load
from flows.model import Flow
from flows.validate import Issue, validate


def make(states: list[dict[str, Any]], transitions: list[dict[str, Any]] = (), **top: Any) -> Flow:
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "t", "title": "T", "start": states[0]["id"],
                           "states": states, "transitions": list(transitions)}
    doc.update(top)
    return load(doc)


def ask(state_id: str) -> dict[str, Any]:
    return {"id": state_id, "say": [{"text": "?"}], "input": {"type": "text", "save_as": state_id}}


def menu(state_id: str) -> dict[str, Any]:
    return {"id": state_id, "say": [{"text": "Choose", "buttons": [[{"text": "Go", "payload": "go"}]]}]}


def end(state_id: str) -> dict[str, Any]:
    return {"id": state_id, "final": True, "say": [{"text": "Bye"}]}


def go(tr_id: str, source: str, target: str, on: str = "input", **extra: Any) -> dict[str, Any]:
    return {"id": tr_id, "from": source, "to": target, "on": on, **extra}


def found(flow: Flow, code: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return [(i.severity, i.states, i.transitions) for i in validate(flow) if i.code == code]


def issues(flow: Flow, code: str) -> list[Issue]:
    return [i for i in validate(flow) if i.code == code]


# --- unreachable_state --------------------------------------------------------------------------

def test_state_without_a_way_in_is_unreachable() -> None:
    flow = make([ask("a"), end("done"), ask("orphan")], [go("t1", "a", "done"), go("t2", "orphan", "done")])
    assert found(flow, "unreachable_state") == [("error", ("orphan",), ())]
    assert '"orphan"' in issues(flow, "unreachable_state")[0].message


def test_every_trigger_kind_is_a_way_in() -> None:
    flow = make(
        [{**ask("a"), "input": {"type": "text", "save_as": "a", "max_attempts": 2}},
         end("by_input"), end("by_timeout"), end("by_invalid"), end("by_event"), end("by_text"),
         end("by_attachment")],
        [go("t1", "a", "by_input"), go("t2", "a", "by_timeout", "timeout", after=60),
         go("t3", "a", "by_invalid", "invalid"), go("t4", "a", "by_event", "event", name="paid"),
         go("t5", "a", "by_text", "text", match=["stop"]),
         go("t6", "a", "by_attachment", "attachment", kinds=["image"])])
    assert found(flow, "unreachable_state") == []


def test_a_final_states_exit_reaches_nothing() -> None:
    flow = make([ask("a"), end("done"), ask("after")],
                [go("t1", "a", "done"), go("t2", "done", "after", "button", payload="x"), go("t3", "after", "done")])
    assert found(flow, "unreachable_state") == [("error", ("after",), ())]


def test_unreachable_state_is_not_reported_without_a_known_start() -> None:
    flow = make([ask("a"), end("done"), ask("orphan")], [go("t1", "a", "done"), go("t2", "orphan", "done")],
                start="missing")
    assert found(flow, "unreachable_state") == []


# --- dead_end -----------------------------------------------------------------------------------

def test_non_final_state_without_transitions_is_a_dead_end() -> None:
    flow = make([ask("a"), ask("stuck"), end("done")],
                [go("t1", "a", "stuck"), go("t2", "a", "done", "button", payload="x")])
    assert found(flow, "dead_end") == [("error", ("stuck",), ())]
    # The same fault is not reported twice.
    assert found(flow, "no_path_to_final") == []


def test_global_commands_do_not_save_a_dead_end() -> None:
    flow = make([ask("a")], commands={"cancel": {"match": ["stop"]}, "back": {"match": ["back"]},
                                       "help": {"match": ["help"], "reply": "Help"}})
    assert found(flow, "dead_end") == [("error", ("a",), ())]


def test_final_state_without_transitions_is_not_a_dead_end() -> None:
    flow = make([ask("a"), end("done")], [go("t1", "a", "done")])
    assert found(flow, "dead_end") == []


def test_a_transition_to_a_missing_state_is_reported_as_unknown_not_dead_end() -> None:
    flow = make([ask("a"), end("done")], [go("t1", "a", "nowhere"), go("t2", "a", "done", "button", payload="x")])
    assert found(flow, "dead_end") == []
    assert [i.states for i in validate(flow) if i.code == "unknown_state"] == [("nowhere",)]


# --- no_path_to_final ---------------------------------------------------------------------------

def test_each_state_of_a_cycle_without_exit_is_reported() -> None:
    flow = make([ask("a"), menu("m1"), menu("m2"), end("done")],
                [go("t1", "a", "m1"), go("t2", "a", "done", "button", payload="quit"),
                 go("t3", "m1", "m2", "button", payload="go"), go("t4", "m2", "m1", "button", payload="go")])
    assert found(flow, "no_path_to_final") == [("error", ("m1",), ()), ("error", ("m2",), ())]
    assert '"m2"' in issues(flow, "no_path_to_final")[0].message


def test_states_leading_only_into_a_dead_end_are_trapped() -> None:
    flow = make([ask("a"), menu("m"), ask("stuck"), end("done")],
                [go("t1", "a", "m"), go("t2", "a", "done", "button", payload="quit"),
                 go("t3", "m", "stuck", "button", payload="go")])
    assert found(flow, "no_path_to_final") == [("error", ("m",), ())]
    assert found(flow, "dead_end") == [("error", ("stuck",), ())]


def test_without_any_final_state_every_reachable_state_is_trapped() -> None:
    flow = make([ask("a"), ask("b")], [go("t1", "a", "b"), go("t2", "b", "a")])
    got = issues(flow, "no_path_to_final")
    assert [i.states for i in got] == [("a",), ("b",)]
    assert all("no final state" in i.message for i in got)


def test_a_state_that_only_loops_on_itself_is_trapped() -> None:
    flow = make([ask("a"), end("done")],
                [go("t1", "a", "a"), go("t2", "a", "a", "timeout", after=60), go("t3", "a", "gone", "else")])
    got = issues(flow, "no_path_to_final")
    assert [(i.states, i.transitions) for i in got] == [(("a",), ())]
    assert "none of its transitions leads to another existing state" in got[0].message


def test_unreachable_traps_are_left_to_unreachable_state() -> None:
    flow = make([ask("a"), end("done"), menu("x"), menu("y")],
                [go("t1", "a", "done"), go("t2", "x", "y", "button", payload="go"),
                 go("t3", "y", "x", "button", payload="go")])
    assert found(flow, "no_path_to_final") == []
    assert [i.states for i in issues(flow, "unreachable_state")] == [("x",), ("y",)]


def test_a_cycle_with_an_exit_is_not_a_trap() -> None:
    flow = make([ask("a"), menu("m1"), menu("m2"), end("done")],
                [go("t1", "a", "m1"), go("t3", "m1", "m2", "button", payload="go"),
                 go("t4", "m2", "m1", "button", payload="go"), go("t5", "m2", "done", "timeout", after=30)])
    assert found(flow, "no_path_to_final") == []


# --- final_has_exit -----------------------------------------------------------------------------

def test_final_state_with_transitions_out_is_a_warning_naming_them() -> None:
    flow = make([ask("a"), end("done")],
                [go("t1", "a", "done"), go("back", "done", "a", "button", payload="again"),
                 go("more", "done", "a", "else")])
    assert found(flow, "final_has_exit") == [("warning", ("done",), ("back", "more"))]
    assert not [i for i in validate(flow) if i.severity == "error"]


def test_final_state_without_transitions_out_has_no_exit_warning() -> None:
    flow = make([ask("a"), end("done")], [go("t1", "a", "done")])
    assert found(flow, "final_has_exit") == []


# --- missing_cancel -----------------------------------------------------------------------------

NO_CANCEL = {"cancel": None}


def test_waiting_state_without_cancel_or_a_way_out_is_reported() -> None:
    flow = make([ask("a"), ask("b"), end("done")], [go("t1", "a", "b"), go("t2", "b", "done")],
                commands=NO_CANCEL)
    assert found(flow, "missing_cancel") == [("error", ("a",), ()), ("error", ("b",), ())]
    assert "cancel" in issues(flow, "missing_cancel")[0].message


def test_a_cancel_that_matches_nothing_is_disabled_too() -> None:
    flow = make([ask("a"), end("done")], [go("t1", "a", "done")], commands={"cancel": {"match": []}})
    assert found(flow, "missing_cancel") == [("error", ("a",), ())]


def test_enabled_cancel_command_is_a_way_out() -> None:
    flow = make([ask("a"), ask("b"), end("done")], [go("t1", "a", "b"), go("t2", "b", "done")])
    assert found(flow, "missing_cancel") == []


def test_text_or_button_straight_to_a_final_state_is_a_way_out() -> None:
    flow = make([ask("a"), ask("b"), end("done"), end("cancelled")],
                [go("t1", "a", "b"), go("quit_a", "a", "cancelled", "text", match=["stop"]),
                 go("t2", "b", "done"), go("quit_b", "b", "cancelled", "button", payload="stop")],
                commands=NO_CANCEL)
    assert found(flow, "missing_cancel") == []


def test_other_triggers_into_a_final_state_are_not_a_way_out() -> None:
    flow = make([ask("a"), end("done"), end("cancelled")],
                [go("t1", "a", "done"), go("t2", "a", "cancelled", "timeout", after=60),
                 go("t3", "a", "cancelled", "event", name="operator_closed")],
                commands=NO_CANCEL)
    assert found(flow, "missing_cancel") == [("error", ("a",), ())]


def test_a_button_to_a_non_final_state_is_not_a_way_out() -> None:
    flow = make([ask("a"), ask("b"), end("done")],
                [go("t1", "a", "b", "button", payload="next"), go("t2", "b", "done"),
                 go("t3", "b", "done", "button", payload="stop")],
                commands=NO_CANCEL)
    assert found(flow, "missing_cancel") == [("error", ("a",), ())]
