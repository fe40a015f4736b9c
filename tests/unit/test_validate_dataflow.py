"""undefined_variable: a key read on some path from start before anything sets it."""
from __future__ import annotations

from collections import deque
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flows.load import load
from flows.templates import compile_template
from flows.model import Flow
from flows.validate import Issue, available_keys, build_graph, validate
from flows.validate.dataflow import placeholders
from flows.validate.transitions import dead_transitions


def make(states: list[dict[str, Any]], transitions: list[dict[str, Any]] = (), **top: Any) -> Flow:
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "t", "title": "T", "start": states[0]["id"],
                           "states": states, "transitions": list(transitions)}
    doc.update(top)
    return load(doc)


def ask(state_id: str, key: str | None = None, text: str = "?", **extra: Any) -> dict[str, Any]:
    return {"id": state_id, "say": [{"text": text}], "input": {"type": "text", "save_as": key or state_id, **extra}}


def menu(state_id: str, text: str = "Choose") -> dict[str, Any]:
    return {"id": state_id, "say": [{"text": text, "buttons": [[{"text": "Go", "payload": "go"}]]}]}


def end(state_id: str, text: str = "Bye") -> dict[str, Any]:
    return {"id": state_id, "final": True, "say": [{"text": text}]}


def go(tr_id: str, source: str, target: str, on: str = "input", **extra: Any) -> dict[str, Any]:
    return {"id": tr_id, "from": source, "to": target, "on": on, **extra}


def undefined(flow: Flow) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return [(i.severity, i.states, i.transitions) for i in validate(flow) if i.code == "undefined_variable"]


def issues(flow: Flow) -> list[Issue]:
    return [i for i in validate(flow) if i.code == "undefined_variable"]


def test_key_collected_on_only_one_way_in_is_reported_with_the_way_that_skips_it() -> None:
    flow = make([ask("ask_name", "name"), menu("choose"), end("done", "Thanks, {name}!")],
                [go("named", "ask_name", "choose"), go("skip", "ask_name", "choose", "button", payload="skip"),
                 go("finish", "choose", "done", "button", payload="go")])
    # "choose" is entered by "named" (name saved) and by "skip" (not), so "done" may lack it.
    assert undefined(flow) == [("warning", ("done",), ("finish",))]
    message = issues(flow)[0].message
    assert "{name}" in message and '"done"' in message and '"finish"' in message


def test_key_collected_on_every_path_is_fine() -> None:
    flow = make([ask("ask_name", "name"), ask("ask_phone", "phone"), end("done", "{name}: {phone}")],
                [go("t1", "ask_name", "ask_phone"), go("t2", "ask_phone", "done")])
    assert undefined(flow) == []


def test_set_counts_and_set_values_read_the_data_before_the_set() -> None:
    flow = make([menu("m"), end("done", "{a} {b}")],
                [go("t1", "m", "done", "button", payload="go", set={"a": "x", "b": "{a}"})])
    assert undefined(flow) == [("warning", ("m",), ("t1",))]
    assert '"a"' in issues(flow)[0].message


def test_input_trigger_saves_before_its_if_and_set_are_read() -> None:
    flow = make([ask("age"), end("adult"), end("child")],
                [go("t1", "age", "adult", **{"if": [{"var": "age", "op": "ge", "value": 18}]},
                    set={"label": "age {age}"}),
                 go("t2", "age", "child")])
    assert undefined(flow) == []


def test_other_triggers_do_not_save_the_input() -> None:
    flow = make([ask("age"), end("adult")],
                [go("t1", "age", "adult", "text", match=["skip"], **{"if": [{"var": "age", "op": "ge", "value": 18}]}),
                 go("t2", "age", "adult")])
    assert undefined(flow) == [("warning", ("age",), ("t1",))]


def test_presence_tests_are_not_reads() -> None:
    flow = make([ask("a"), end("done")],
                [go("t1", "a", "done", "text", match=["x"], **{"if": [{"var": "later", "op": "unset"}]}),
                 go("t2", "a", "done", "text", match=["y"], **{"if": [{"var": "later", "op": "set"}]}),
                 go("t3", "a", "done", set={"later": "1"})])
    assert undefined(flow) == []


def test_a_loop_that_sets_the_key_later_does_not_cover_the_first_visit() -> None:
    flow = make([ask("start", "name"), menu("hub", "Count: {count}"), end("done")],
                [go("t1", "start", "hub"), go("again", "hub", "hub", "button", payload="again", set={"count": "1"}),
                 go("t2", "hub", "done", "button", payload="go")])
    assert undefined(flow) == [("warning", ("hub",), ("t1",))]


def test_a_loop_entered_with_the_key_set_is_fine() -> None:
    flow = make([ask("start", "name"), menu("hub", "Hi {name}"), menu("side"), end("done")],
                [go("t1", "start", "hub"), go("t2", "hub", "side", "button", payload="side"),
                 go("t3", "side", "hub", "button", payload="back"), go("t4", "hub", "done", "button", payload="go")])
    assert undefined(flow) == []


def test_start_state_has_no_data() -> None:
    flow = make([ask("ask_name", "name", "Hello {name}"), end("done")], [go("t1", "ask_name", "done")])
    got = issues(flow)
    assert [(i.states, i.transitions) for i in got] == [(("ask_name",), ())]
    assert "new dialog" in got[0].message


def test_returning_to_start_does_not_make_its_keys_available() -> None:
    flow = make([ask("ask_name", "name", "Hello {name}"), end("done")],
                [go("t1", "ask_name", "ask_name", "text", match=["again"], set={"name": "x"}),
                 go("t2", "ask_name", "done")])
    assert [i.states for i in issues(flow)] == [("ask_name",)]


def test_say_is_read_before_a_clear_action_and_later_states_see_no_data() -> None:
    flow = make([ask("ask_name", "name"), menu("thanks", "Thanks {name}"), end("done", "Bye {name}")],
                [go("t1", "ask_name", "thanks", actions=[{"type": "clear"}]),
                 go("t2", "thanks", "done", "button", payload="go")])
    assert undefined(flow) == [("warning", ("done",), ("t2",))]


def test_the_input_error_text_is_read_while_waiting() -> None:
    flow = make([ask("ask_name", "name"), ask("ask_age", "age", error="{name}, give a number"), end("done")],
                [go("t1", "ask_name", "ask_age"), go("t2", "ask_age", "done")])
    assert undefined(flow) == []
    flow = make([ask("ask_name", "name"), ask("ask_age", "age", error="Not a number: {age}"), end("done")],
                [go("t1", "ask_name", "ask_age"), go("t2", "ask_age", "done")])
    assert undefined(flow) == [("warning", ("ask_age",), ("t1",))]


def test_global_texts_are_read_in_every_waiting_state() -> None:
    states = [ask("ask_name", "name"), ask("ask_phone", "phone"), end("done")]
    transitions = [go("t1", "ask_name", "ask_phone"), go("t2", "ask_phone", "done")]
    flow = make(states, transitions, settings={"fallback": "Sorry {name}", "reminder": {"after": 60, "text": "{phone}?"}},
                commands={"help": {"match": ["/help"], "reply": "{name}, {phone}"}})
    got = [(i.states, i.message.split(" reads ")[0]) for i in issues(flow)]
    assert got == [
        (("ask_name",), "The fallback text"),
        (("ask_name",), 'The reply of the "help" command'),
        (("ask_name", "ask_phone"), 'The reply of the "help" command'),
        (("ask_name", "ask_phone"), "The reminder"),
    ]
    assert all(i.severity == "warning" and i.transitions == () for i in issues(flow))


def test_a_global_text_reading_a_key_set_nowhere_names_every_waiting_state() -> None:
    flow = make([ask("ask_name", "name"), ask("ask_age", "age"), end("done")],
                [go("t1", "ask_name", "ask_age"), go("t2", "ask_age", "done")], settings={"fallback": "Sorry {zz}"})
    assert undefined(flow) == [("warning", ("ask_name", "ask_age"), ())]


def test_global_texts_reading_only_collected_keys_after_the_first_state_are_fine() -> None:
    flow = make([ask("ask_name", "name"), end("done")], [go("t1", "ask_name", "done")],
                settings={"fallback": "Please answer {{like this}}"})
    assert undefined(flow) == []


def test_event_payload_and_start_payload_never_count_as_set() -> None:
    flow = make([menu("wait", "Promo: {start_payload}"), end("paid"), end("stop")],
                [go("t1", "wait", "paid", "event", name="payment", **{"if": [{"var": "amount", "op": "gt", "value": 0}]}),
                 go("t2", "wait", "stop", "button", payload="stop")])
    got = issues(flow)
    assert [(i.states, i.transitions) for i in got] == [(("wait",), ()), (("wait",), ("t1",))]
    assert all("nothing in the flow sets" in i.message for i in got)


def test_event_key_set_elsewhere_is_still_missing_on_the_event_path() -> None:
    flow = make([menu("wait"), end("paid", "Paid {amount}"), end("stop")],
                [go("t1", "wait", "paid", "event", name="payment"),
                 go("t2", "wait", "stop", "button", payload="stop", set={"amount": "0"})])
    assert undefined(flow) == [("warning", ("paid",), ("t1",))]


def test_button_texts_are_templates_but_payloads_are_not() -> None:
    flow = make([{"id": "m", "say": [{"text": "Pick", "buttons": [[{"text": "{label}", "payload": "{raw}"}]]}]},
                 end("done")],
                [go("t1", "m", "done", "button", payload="{raw}")])
    assert [i.message.split(", but")[0] for i in issues(flow)] == ['State "m" shows {label}']


def test_transitions_that_never_fire_carry_no_data_and_read_nothing() -> None:
    flow = make([ask("ask_name", "name"), menu("hub", "Hi {name}"), end("done")],
                [go("t1", "ask_name", "hub"),
                 go("t2", "ask_name", "hub", "else", set={"x": "{nothing}"}),  # the state waits for input
                 go("t3", "hub", "done", "button", payload="go"),
                 go("t4", "hub", "done", "button", payload="go", **{"if": [{"var": "ghost", "op": "eq", "value": 1}]})])
    assert [i.code for i in validate(flow)] == ["ambiguous_transition", "unreachable_transition"]
    assert available_keys(flow)["hub"] == frozenset({"name"})


def test_unreachable_states_are_not_read() -> None:
    flow = make([ask("a"), end("done"), end("orphan", "{nothing}")], [go("t1", "a", "done")])
    assert undefined(flow) == []


def test_no_analysis_without_a_start() -> None:
    flow = make([ask("a", text="{x}"), end("done")], [go("t1", "a", "done")], start="missing")
    assert undefined(flow) == []
    assert available_keys(flow) == {}


def _oracle(flow: Flow, *, entering: bool = False) -> dict[str, frozenset[str]]:
    """Keys surely set in each reachable state, by searching (state, key-is-set) pairs per key.

    At rest by default; with `entering`, when the state's messages render (after `set`, before `clear`).
    """
    dead = dead_transitions(flow, build_graph(flow))
    edges: dict[str, list[tuple[str, set[str], bool]]] = {}
    for tr in flow.transitions:
        source, target = flow.state(tr.source), flow.state(tr.target)
        if source is None or target is None or source.final or id(tr) in dead:
            continue
        sets = {key for key, _ in tr.set}
        if tr.on == "input" and source.input is not None and source.input.save_as:
            sets.add(source.input.save_as)
        edges.setdefault(source.id, []).append((target.id, sets, any(a.type == "clear" for a in tr.actions)))
    keys = {k for s in flow.states if s.input and s.input.save_as for k in [s.input.save_as]}
    keys |= {key for tr in flow.transitions for key, _ in tr.set}
    reach = {flow.start}
    queue = deque([flow.start])
    while queue:
        for target, _, _ in edges.get(queue.popleft(), ()):
            if target not in reach:
                reach.add(target)
                queue.append(target)
    maybe_unset: dict[str, set[str]] = {state: set() for state in reach}
    for key in keys:
        seen = {(flow.start, False)}
        queue = deque(seen)
        if entering:
            maybe_unset[flow.start].add(key)
        while queue:
            node, has = queue.popleft()
            if not has and not entering:
                maybe_unset[node].add(key)
            for target, sets, clear in edges.get(node, ()):
                if entering and not has and key not in sets:
                    maybe_unset[target].add(key)
                pair = (target, False if clear else (has or key in sets))
                if pair not in seen:
                    seen.add(pair)
                    queue.append(pair)
    return {state: frozenset(keys - maybe_unset[state]) for state in reach}


KEYS = st.sampled_from(["a", "b", "c"])


@st.composite
def small_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """Few states and few keys, so paths meet, loop and clear often."""
    count = draw(st.integers(1, 6))
    ids = [f"s{i}" for i in range(count)]
    states: list[dict[str, Any]] = []
    for state_id in ids:
        state: dict[str, Any] = {"id": state_id, "final": draw(st.booleans()) and state_id != "s0",
                                 "say": [{"text": "{a} {b} {c}"}]}
        if not state["final"] and draw(st.booleans()):
            state["input"] = {"type": "any", "save_as": draw(KEYS)}
        states.append(state)
    transitions = []
    for index in range(draw(st.integers(0, 14))):
        on = draw(st.sampled_from(["input", "button", "else", "timeout"]))
        tr: dict[str, Any] = {"id": f"t{index}", "from": draw(st.sampled_from(ids)),
                              "to": draw(st.sampled_from(ids)), "on": on}
        if on == "button":
            tr["payload"] = "p"
        if on == "timeout":
            tr["after"] = 5
        if draw(st.booleans()):
            tr["set"] = {key: "v" for key in draw(st.lists(KEYS, max_size=2))}
        if draw(st.integers(0, 4)) == 0:
            tr["actions"] = [{"type": "clear"}]
        transitions.append(tr)
    return {"format": "botflow/v1", "id": "g", "title": "G", "start": "s0", "states": states,
            "transitions": transitions}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_graphs())
def test_fixpoint_matches_a_search_over_every_path(doc: dict[str, Any]) -> None:
    flow = load(doc)
    assert available_keys(flow) == _oracle(flow)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("{}ab_1 x"), max_size=24))
def test_placeholders_are_what_the_renderer_reads(text: str) -> None:
    compiled = compile_template(text)
    assert placeholders(text) == ([] if isinstance(compiled, str) else list(compiled[1::2]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_graphs())
def test_messages_warn_exactly_where_a_key_may_be_unset_on_entering(doc: dict[str, Any]) -> None:
    flow = load(doc)
    warned = {(i.states[0], i.message.split("{")[1].split("}")[0]) for i in issues(flow)
              if i.message.startswith("State ")}
    expected = {(state, key) for state, keys in _oracle(flow, entering=True).items()
                for key in {"a", "b", "c"} - keys}
    assert warned == expected
