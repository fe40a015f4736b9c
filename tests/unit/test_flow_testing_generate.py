"""Generated tests: every transition of each example and of random flows is covered, or named with a reason."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import flow_documents

from flows.load import load
from flows.model import Input
from flows.testing.cases import parse_cases
from flows.testing.examples import invalid_input, pattern_example, valid_inputs
from flows.testing.generate import generate
from flows.testing.runner import run_cases

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))


def check_generated(flow) -> dict:
    """The generated cases pass on the flow they came from, and fire exactly what they claim to cover."""
    generated = generate(flow)
    ids = [tr.id for tr in flow.transitions]
    covered = set(generated["coverage"]["covered"])
    uncovered = {u["transition"]: u["reason"] for u in generated["uncovered"]}
    assert covered | set(uncovered) == set(ids) and not covered & set(uncovered)
    assert all(isinstance(why, str) and why for why in uncovered.values())
    report = run_cases(flow, parse_cases(generated["tests"]))
    assert report["failed"] == 0, report["results"]
    assert set(report["coverage"]["covered"]) == covered
    missing = {m["key"] for m in generated["coverage"]["points"]["missing"]}
    assert {m["key"] for m in report["coverage"]["points"]["missing"]} == missing
    return generated


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_transition_of_each_example_is_covered(path: Path) -> None:
    flow = load(json.loads(path.read_text(encoding="utf-8")))
    generated = check_generated(flow)
    assert generated["uncovered"] == []
    points = generated["coverage"]["points"]
    # Beside transitions, every point a message can reach is covered; what is not says why.
    assert all(m["reason"] for m in points["missing"])
    assert [m["kind"] for m in points["missing"]] in ([], ["invalid"])
    assert len(generated["tests"]) <= points["total"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flow_documents())
def test_random_flows_are_covered_or_the_reason_is_named(document) -> None:
    check_generated(load(document))


def doc(states, transitions, **top):
    return load({"format": "botflow/v1", "id": "t", "title": "T", "start": states[0]["id"], "states": states,
                 "transitions": transitions, **top})


def test_conditions_are_met_by_choosing_inputs_and_event_payloads() -> None:
    flow = doc([
        {"id": "age", "say": [{"text": "Age?"}], "input": {"type": "integer", "save_as": "age", "min": 0, "max": 120}},
        {"id": "pay", "say": [{"text": "Pay"}]},
        {"id": "young", "final": True, "say": [{"text": "Too young"}]},
        {"id": "rich", "final": True, "say": [{"text": "Paid"}]},
        {"id": "poor", "final": True, "say": [{"text": "Not enough"}]},
    ], [
        {"id": "adult", "from": "age", "to": "pay", "on": "input", "if": [{"var": "age", "op": "ge", "value": 18}]},
        {"id": "minor", "from": "age", "to": "young", "on": "input"},
        {"id": "paid_big", "from": "pay", "to": "rich", "on": "event", "name": "paid",
         "if": [{"var": "amount", "op": "gt", "value": 1000}]},
        {"id": "paid_small", "from": "pay", "to": "poor", "on": "event", "name": "paid"},
    ])
    generated = check_generated(flow)
    assert generated["uncovered"] == []
    updates = [s["update"] for t in generated["tests"] for s in t["steps"]]
    assert {"event": "paid", "payload": {"amount": 1001}} in updates


def test_invalid_paths_timeouts_and_reminders_go_through_idle() -> None:
    flow = doc([
        {"id": "phone", "say": [{"text": "Phone?"}], "input": {"type": "phone", "save_as": "phone", "max_attempts": 2,
                                                               "error": "Bad phone"}},
        {"id": "wait", "say": [{"text": "Wait"}]},
        {"id": "done", "final": True, "say": [{"text": "Done"}]},
    ], [
        {"id": "ok", "from": "phone", "to": "wait", "on": "input"},
        {"id": "gave_up", "from": "phone", "to": "done", "on": "invalid"},
        {"id": "late", "from": "wait", "to": "done", "on": "timeout", "after": 300},
    ], settings={"session_ttl": 3600, "reminder": {"after": 120, "text": "Still there?"}})
    generated = check_generated(flow)
    assert generated["uncovered"] == []
    steps = [s for t in generated["tests"] for s in t["steps"]]
    assert {"idle": 300.0} in [s["update"] for s in steps]
    late = next(s for s in steps if s["update"] == {"idle": 300.0})
    assert late["expect"]["replies"] == ["Still there?", "Done"]
    assert [s["update"] for s in steps].count({"text": "12345"}) >= 2


def test_uncovered_transitions_are_named_with_the_reason() -> None:
    flow = doc([
        {"id": "ask", "say": [{"text": "?"}], "input": {"type": "regex", "pattern": r"^[^\s\S]$", "save_as": "code"}},
        {"id": "menu", "say": [{"text": "Menu"}]},
        {"id": "island", "say": [{"text": "Nobody comes here"}]},
        {"id": "end", "final": True},
    ], [
        {"id": "code_ok", "from": "ask", "to": "end", "on": "input"},
        {"id": "bad_else", "from": "ask", "to": "end", "on": "else"},
        {"id": "never", "from": "ask", "to": "menu", "on": "button", "payload": "go",
         "if": [{"var": "code", "op": "eq", "value": "zzz"}, {"var": "code", "op": "ne", "value": "zzz"}]},
        {"id": "from_island", "from": "island", "to": "end", "on": "text", "match": ["hi"]},
        {"id": "menu_end", "from": "menu", "to": "end", "on": "text", "match": ["x"]},
        {"id": "after_end", "from": "end", "to": "ask", "on": "text", "match": ["again"]},
    ])
    reasons = {u["transition"]: u["reason"] for u in check_generated(flow)["uncovered"]}
    assert "pattern" in reasons["code_ok"]
    assert "every message is input" in reasons["bad_else"]
    assert "condition (code eq zzz and code ne zzz)" in reasons["never"]
    assert reasons["from_island"] == "no dialog reaches island from the start"
    assert reasons["after_end"] == "end is final: the dialog ends on entering it"
    assert "menu" in reasons["menu_end"]


@pytest.mark.parametrize("pattern", [r"^\d{5}$", r"да|yes", r"^[A-Z]{2}\d+$", r"\w+@\w+", r"^(?:ok|okay)$",
                                     r"[а-я]+", r"^[^0-9]{3}-\d\d$", r"^\+?\d{1,3}\s\w{2,}$"])
def test_pattern_examples_match(pattern: str) -> None:
    import re

    example = pattern_example(pattern)
    assert example is not None and re.search(pattern, example)


def test_every_input_type_has_a_valid_and_an_invalid_example() -> None:
    from flows import inputs

    for inp in [Input("text", min_length=3, max_length=5), Input("phone"), Input("email"),
                Input("number", min=10, max=20), Input("integer", min=-5, max=-1), Input("choice", choices=("A", "B")),
                Input("regex", pattern=r"^\d{4}$"), Input("date"), Input("attachment", kinds=("file",)),
                Input("contact"), Input("location")]:
        good, why = valid_inputs(inp, [])
        assert good and why is None, inp
        for update in good:
            atts = [update["attachment"]] if "attachment" in update else []
            assert inputs.check(inp, update.get("text"), atts).ok, (inp, update)
        bad = invalid_input(inp)
        atts = [bad["attachment"]] if "attachment" in bad else []
        assert not inputs.check(inp, bad.get("text"), atts).ok, (inp, bad)
    assert invalid_input(Input("any")) is None
    assert valid_inputs(Input("number", min=5, max=4), []) == ([], "no number value satisfies the input's limits")


def test_long_dialogs_are_kept_as_pieces_that_start_where_the_dialog_entered_a_state() -> None:
    states = [{"id": f"s{i}", "say": [{"text": f"Step {i}, {{name}}"}], "input": {"type": "text", "save_as": "name"}}
              for i in range(60)]
    states += [{"id": "done", "final": True, "say": [{"text": "Done"}]},
               {"id": "closed", "final": True, "say": [{"text": "Closed by an operator"}]}]
    transitions = [{"id": f"next{i}", "from": f"s{i}", "to": f"s{i + 1}" if i < 59 else "done", "on": "input"}
                   for i in range(60)]
    transitions += [{"id": f"close{i}", "from": f"s{i}", "to": "closed", "on": "event", "name": "closed"}
                    for i in range(0, 60, 7)]
    flow = doc(states, transitions)
    generated = check_generated(flow)
    assert generated["uncovered"] == []
    pieces = [t for t in generated["tests"] if "start" in t]
    assert pieces and all(len(t["steps"]) < 40 for t in generated["tests"])
    # Shared beginnings appear once: far fewer steps than one whole dialog per event transition, and each
    # state's invalid input is a short piece from where the dialog entered that state.
    assert not generated["coverage"]["points"]["missing"]
    assert sum(len(t["steps"]) for t in generated["tests"]) < 60 * 3 + 60
