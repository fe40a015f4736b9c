"""Hostile documents and dialogs (issue 9): each finding refused with its path, or bounded at run time."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from engine_strategies import Talk, flow_of, texts
from test_fastcheck import agree
from test_load import base

from flows.conditions import check as check_condition
from flows.errors import DocumentSyntaxError, FlowFormatError
from flows.fastcheck import well_formed
from flows.limits import MAX_DATA_BYTES, MAX_DEPTH, MAX_REPLIES, data_bytes, data_fits
from flows.load import load, load_text, parse_text
from flows.inputs import check as check_input
from flows.model import Condition, Flow, Input
from flows.engine import step
from flows.dialog import Update
from flows.validate import PER_CODE, bounded, validate, validation_result

ROOT = Path(__file__).resolve().parents[2]


def problems(doc: dict[str, Any], **kwargs: Any) -> list[dict[str, str]]:
    """The details loading `doc` reports (empty when it loads); the quick check must agree."""
    if not kwargs:
        agree(copy.deepcopy(doc))
    try:
        load(doc, **kwargs)
    except FlowFormatError as exc:
        return exc.details
    return []


def paths(doc: dict[str, Any], **kwargs: Any) -> list[str]:
    return [d["path"] for d in problems(doc, **kwargs)]


def nested(levels: int) -> list[Any]:
    """A list holding lists `levels` containers deep in all (the outer one counted)."""
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


# Nesting ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, fmt", [
    ("format: botflow/v1\nid: y\nstates: []\nx-d: " + "[" * 100_000 + "]" * 100_000, "yaml"),
    ("[" * 100_000, None),  # refused as JSON, then tried as YAML
    ("format: botflow/v1\nid: y\nstates: []\nx-d:\n  " + "- " * 60_000 + "x\n", "yaml"),
    ("{a: " * 60_000 + "1" + "}" * 60_000, "yaml"),
], ids=["flow-sequences", "sniffed", "block-sequences", "flow-mappings"])
def test_yaml_nested_past_the_c_stack_is_refused_not_a_crash(text: str, fmt: str | None) -> None:
    # In a child process: libyaml's composer overflowing the C stack kills the interpreter, not a test.
    script = ("import sys\nfrom flows.errors import DocumentSyntaxError\nfrom flows.load import parse_text\n"
              "try:\n    parse_text(sys.stdin.read(), sys.argv[1] or None)\nexcept DocumentSyntaxError as e:\n"
              "    print(e.message)\n")
    done = subprocess.run([sys.executable, "-c", script, fmt or ""], input=text, capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-500:]
    assert "nested too deeply" in done.stdout


def test_yaml_nested_past_the_shape_limit_still_names_the_path() -> None:
    text = "format: botflow/v1\nid: f\ntitle: t\nstates: []\nx-d: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    with pytest.raises(FlowFormatError) as caught:
        load_text(text, "yaml")
    assert any(d["path"].startswith("x-d") for d in caught.value.details)


# Numbers -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, fmt", [
    ('{"format": "botflow/v1", "id": "f", "states": [], "x": %s}' % ("9" * 5000), "json"),
    ("format: botflow/v1\nid: f\nstates: []\nx-a: %s\n" % ("9" * 5000), "yaml"),
])
def test_a_5000_digit_number_is_a_syntax_error_not_a_crash(text: str, fmt: str) -> None:
    with pytest.raises(DocumentSyntaxError, match="2\\^53"):
        parse_text(text, fmt)


@pytest.mark.parametrize("where, value", [
    (("x-big",), 10 ** 5000), (("x",), 10 ** 5000), (("layout", "ask_name", "x"), 10 ** 400),
    (("settings", "session_ttl"), 10 ** 400 - 1), (("settings", "reminder", "after"), 10 ** 400),
    (("transitions", 0, "after"), 10 ** 400), (("transitions", 1, "if", 0, "value"), -(10 ** 5000)),
    (("states", 0, "input", "min"), 2 ** 53 + 1), (("x-f",), 1e300),
], ids=lambda value: ".".join(map(str, value)) if isinstance(value, tuple) else "number")
def test_numbers_past_2_to_the_53_are_a_load_error_at_their_path(where: tuple[Any, ...], value: Any) -> None:
    doc = base()
    doc["settings"]["reminder"] = {"after": 60, "text": "Ау?"}
    doc["layout"] = {"ask_name": {"x": 0, "y": 0}}
    doc["transitions"][0] = {"id": "t0", "from": "ask_name", "to": "ask_phone", "on": "timeout", "after": 60}
    doc["transitions"][1]["if"] = [{"var": "a", "op": "eq", "value": 1}]
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    found = problems(doc)
    path = ".".join(str(k) for k in where).replace(".0.", "[0].").replace(".1.", "[1].")
    assert [d["path"] for d in found] == [path]
    assert "2^53" in found[0]["message"] or "at most" in found[0]["message"]
    assert len(found[0]["message"]) < 300  # the number is described, never printed


@pytest.mark.parametrize("field", ["session_ttl", "reminder", "timeout"])
def test_seconds_are_at_most_a_year(field: str) -> None:
    def doc_with(seconds: int) -> dict[str, Any]:
        doc = base()
        doc["settings"] = {"session_ttl": 31_536_000}
        if field == "session_ttl":
            doc["settings"]["session_ttl"] = seconds
        elif field == "reminder":
            doc["settings"]["reminder"] = {"after": seconds, "text": "Ау?"}
        else:
            doc["transitions"].append({"from": "ask_name", "to": "ask_name", "on": "timeout", "after": seconds})
        return doc

    assert problems(doc_with(31_536_000 - (field == "reminder"))) == []
    found = problems(doc_with(31_536_001))
    assert len(found) == 1 and "31,536,000" in found[0]["message"]


# Nesting -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["x-data", "layout", "state x-"])
def test_nesting_past_64_levels_is_refused_and_64_is_fine(where: str) -> None:
    def doc_with(levels: int) -> dict[str, Any]:
        doc = base()
        if where == "x-data":  # the list sits at level 2
            doc["x-data"] = nested(levels - 1)
        elif where == "layout":  # layout 2, its key 3
            doc["layout"] = {"ask_name": nested(levels - 2)}
        else:  # states 2, the state 3, the x- value 4
            doc["states"][0]["x-own"] = nested(levels - 3)
        return doc

    assert problems(doc_with(MAX_DEPTH)) == []
    found = problems(doc_with(MAX_DEPTH + 1))
    assert len(found) == 1 and "64 levels" in found[0]["message"]


def test_an_x_key_nested_900_deep_is_one_load_error() -> None:
    doc = base()
    value: dict[str, Any] = {}
    doc["x-deep"] = value
    for _ in range(900):
        value["x-k"] = {}
        value = value["x-k"]
    assert not well_formed(doc)
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    assert len(caught.value.details) == 1 and caught.value.details[0]["path"].startswith("x-deep.x-k")


@pytest.mark.parametrize("text", ["[" * 10000 + "]" * 10000, "a: " + "[" * 10000 + "]" * 10000])
def test_deeply_nested_text_never_escapes_the_loader(text: str) -> None:
    with pytest.raises((DocumentSyntaxError, FlowFormatError)):
        load_text(text)


# Outbound safety ---------------------------------------------------------------------------------

PRIVATE = ["http://127.0.0.1/", "http://127.1:8080/hook", "http://0x7f000001/", "http://2130706433/",
           "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/latest/meta-data",
           "http://localhost:8000/api", "https://10.1.2.3/", "http://192.168.0.10/", "http://0.0.0.0/",
           "http://user@127.0.0.1/", "http://LOCALHOST./"]


def webhook_doc(url: str) -> dict[str, Any]:
    doc = base()
    doc["transitions"][0]["actions"] = [{"type": "clear"}, {"type": "webhook", "url": url}]
    return doc


@pytest.mark.parametrize("url", PRIVATE)
def test_webhooks_to_local_private_or_metadata_hosts_are_load_errors(url: str) -> None:
    found = problems(webhook_doc(url))
    assert [d["path"] for d in found] == ["transitions[0].actions[1].url"]
    assert "may not post" in found[0]["message"]


def test_the_deployment_may_allow_hosts_and_networks() -> None:
    assert problems(webhook_doc("http://10.1.2.3/crm"), allow=["10.0.0.0/8"]) == []
    assert problems(webhook_doc("http://crm.internal/"), allow=["crm.internal"]) == []
    assert problems(webhook_doc("http://localhost/"), allow=["localhost"]) == []
    assert paths(webhook_doc("http://192.168.0.1/"), allow=["10.0.0.0/8"]) == ["transitions[0].actions[1].url"]
    assert problems(webhook_doc("http://127.0.0.1/"), allow=None) == []  # a frozen version is not rechecked


def test_public_webhooks_load() -> None:
    for url in ("https://crm.example/leads", "http://8.8.8.8/x", "https://[2001:4860::8888]/"):
        assert problems(webhook_doc(url)) == []


@pytest.mark.parametrize("url, ok", [("javascript:alert(1)", False), ("JAVASCRIPT:alert(1)", False),
                                     ("data:text/html,x", False), ("ftp://x.example/", False),
                                     ("https://x.example/", True), ("http://x.example/", True),
                                     ("max://user/123", True), ("HTTPS://X.EXAMPLE/", True)])
def test_link_buttons_open_only_web_and_max_links(url: str, ok: bool) -> None:
    doc = base()
    doc["states"][1]["say"][0]["buttons"] = [[{"text": "Открыть", "url": url}]]
    assert paths(doc) == ([] if ok else ["states[1].say[0].buttons[0][0].url"])


def test_request_buttons_ask_for_a_contact_or_a_location() -> None:
    doc = base()
    doc["states"][1]["say"][0]["buttons"] = [[{"text": "Телефон", "request": "contact"},
                                              {"text": "Где я", "request": "location"}]]
    flow = load(doc)
    d = Talk(flow)
    d.send("hi")
    d.send("Иван")
    assert d.last.replies[0].buttons == [[{"text": "Телефон", "request": "contact"},
                                          {"text": "Где я", "request": "location"}]]
    doc["states"][1]["say"][0]["buttons"] = [[{"text": "Телефон", "request": "phone"},
                                              {"text": "Оба", "request": "contact", "payload": "x"}]]
    found = problems(doc)
    assert [d["path"] for d in found] == ["states[1].say[0].buttons[0][0].request", "states[1].say[0].buttons[0][1]"]
    assert 'unknown request "phone"' in found[0]["message"] and "not both" in found[1]["message"]


# Run time ----------------------------------------------------------------------------------------

def test_a_message_of_1333_placeholders_sends_at_most_ten_messages() -> None:
    flow = flow_of([{"id": "ask", "say": [{"text": "?"}], "input": {"type": "text", "save_as": "a"}},
                    {"id": "echo", "say": [{"text": "{a}" * 1333}], "input": {"type": "any"}}],
                   [{"from": "ask", "to": "echo", "on": "input"}])
    d = Talk(flow)
    d.send("hi")
    result = d.send("x" * 400)
    assert len(result.replies) == MAX_REPLIES
    assert all(len(r.text) == 4000 for r in result.replies)
    assert result.dropped > 0 and "dropped" in result.reason
    assert d.state == "echo"


def doubling() -> Flow:
    return flow_of([{"id": "ask", "say": [{"text": "?"}], "input": {"type": "text", "save_as": "v"}},
                    {"id": "loop", "say": [{"text": "{v}", "buttons": [[{"text": "Ещё", "payload": "more"}]]}]}],
                   [{"from": "ask", "to": "loop", "on": "input"},
                    {"id": "twice", "from": "loop", "to": "loop", "on": "button", "payload": "more",
                     "set": {"v": "{v}{v}"}}])


def test_the_data_bound_is_64_kib_of_compact_json() -> None:
    exactly = {"v": "x" * (MAX_DATA_BYTES - len('{"v":""}'))}
    assert len(json.dumps(exactly, separators=(",", ":"))) == MAX_DATA_BYTES == 65536
    assert data_bytes(exactly) == MAX_DATA_BYTES and data_fits(exactly)
    over = {"v": exactly["v"] + "я"}  # two bytes in UTF-8
    assert data_bytes(over) == MAX_DATA_BYTES + 2 and not data_fits(over)


def test_data_that_would_grow_past_64_kib_refuses_the_update_and_changes_nothing_else() -> None:
    d = Talk(doubling())
    d.send("hi")
    d.send("x" * 1000)
    for turn in range(6):  # 2, 4, ... 64 thousand characters: still within the bound
        assert d.send(Update.button("more")).transition == "twice", turn
    assert len(d.data["v"]) == 64000 and data_bytes(d.data) <= MAX_DATA_BYTES
    before = d.dialog.to_dict()
    refused = d.send(Update.button("more"), wait=5)
    assert refused.outcome == "input_invalid" and refused.transition is None
    assert texts(refused) == ["Не понял. Повторите, пожалуйста."]  # the state has no error text
    after = d.dialog.to_dict()
    assert after["data"] == before["data"] and after["state"] == "loop" and after["history"] == before["history"]
    assert after["updated_at"] == before["updated_at"] + 5  # the update did reach the dialog


def test_an_oversized_input_gets_the_states_error() -> None:
    flow = flow_of([{"id": "ask", "say": [{"text": "?"}], "input": {"type": "text", "save_as": "v", "error": "Короче"}},
                    {"id": "done", "final": True, "say": [{"text": "ok"}]}],
                   [{"from": "ask", "to": "ask", "on": "input", "set": {"w": "{w}{v}{v}{v}{v}{v}{v}{v}{v}"}}])
    d = Talk(flow)
    d.send("hi")
    d.send("y" * 4000)
    assert len(d.data["w"]) == 32000
    refused = d.send("z" * 4000)
    assert texts(refused) == ["Короче"] and d.data["v"] == "y" * 4000 and len(d.data["w"]) == 32000


# Validation answers ------------------------------------------------------------------------------

def test_thousands_of_the_same_issue_are_listed_up_to_a_bound_then_summed_up() -> None:
    states = [{"id": "s0", "say": [{"text": "?"}]}] + [{"id": f"s{i}", "final": True} for i in range(1, 400)]
    flow = flow_of(states, [{"from": "s0", "to": "s1", "on": "else"}])
    issues = validate(flow)
    assert sum(i.code == "unreachable_state" for i in issues) == 398
    answer = validation_result(flow)["issues"]
    unreachable = [i for i in answer if i["code"] == "unreachable_state"]
    assert len(unreachable) == PER_CODE + 1
    assert "298 more unreachable_state issues" in unreachable[-1]["message"]
    assert unreachable[:PER_CODE] == [i.to_dict() for i in issues if i.code == "unreachable_state"][:PER_CODE]
    small = bounded(issues, per_code=2, names=1)
    assert [i.code for i in small].count("unreachable_state") == 3
    assert all(len(i.states) <= 1 for i in small)


def test_a_huge_number_as_a_key_is_described_not_printed() -> None:
    doc = base()
    doc[10 ** 5000] = "x"
    doc["states"][0][10 ** 5000] = 1
    found = problems(doc)
    assert [d["path"] for d in found] == ["[a 5001-digit number]", "states[0][a 5001-digit number]"]


def test_request_buttons_become_the_max_request_buttons() -> None:
    from server.channels.max.render import keyboard

    rows = [[{"text": "Телефон", "request": "contact"}, {"text": "Где я", "request": "location"}]]
    assert keyboard(rows) == {"type": "inline_keyboard", "payload": {"buttons": [
        [{"type": "request_contact", "text": "Телефон"}, {"type": "request_geo_location", "text": "Где я"}]]}}


def test_a_huge_broken_draft_lists_a_bounded_number_of_load_problems() -> None:
    doc = base()
    doc["states"] = [{"id": f"s{i}", "input": {"type": "phon"}} for i in range(3000)]
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    details = caught.value.details
    assert len(details) == 1001 and details[0]["path"] == "states[0].input.type"
    assert "2,000 more problems" in details[-1]["message"]
    assert "3000 problems" in caught.value.message


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.one_of(
    st.text(alphabet="ab\"\\\x01я😀", min_size=0, max_size=4000), st.integers(), st.none(), st.booleans(),
    st.lists(st.text(max_size=3000), max_size=4)), max_size=40))
def test_the_size_check_agrees_with_the_encoded_size(data: dict[str, Any]) -> None:
    assert data_fits(data) == (data_bytes(data) <= MAX_DATA_BYTES)


def test_lists_and_objects_in_data_count_with_their_content() -> None:
    assert not data_fits({"a": ["x" * 70000]}) and not data_fits({"a": {"b": "x" * 70000}, "n": 1})
    assert data_fits({"a": ["x" * 1000], "n": 1, "s": "y"})
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert not data_fits({"p": deep})  # too deep to encode is too big


def test_an_event_whose_payload_would_overflow_the_data_changes_nothing() -> None:
    flow = flow_of([{"id": "a", "say": [{"text": "?"}]}, {"id": "b", "say": [{"text": "{p}"}]}],
                   [{"from": "a", "to": "b", "on": "event", "name": "e"}])
    d = Talk(flow)
    d.send("hi")
    for payload in ({"p": ["x" * 70000]}, {"p": [[["x" * 40000]]], "q": "y" * 40000}):
        result = step(flow, d.dialog, Update.event("e", payload), d.now + 1)
        assert result.outcome == "ignored" and result.replies == [] and result.dialog is d.dialog


def test_a_message_of_5000_digits_is_not_a_number_and_never_a_crash() -> None:
    ask = {"id": "ask", "say": [{"text": "?"}], "input": {"type": "integer", "save_as": "n", "error": "Число?"}}
    flow = flow_of([ask,
                    {"id": "big", "final": True, "say": [{"text": "ok"}]}],
                   [{"from": "ask", "to": "big", "on": "input", "if": [{"var": "n", "op": "gt", "value": 5}]}])
    d = Talk(flow)
    d.send("hi")
    assert texts(d.send("9" * 5000)) == ["Число?"]
    assert texts(d.send("9" * 300)) == ["ok"]
    assert check_condition(Condition("v", "gt", 5), {"v": "1" * 5000}) is False  # compared as text: "1..." < "5"
    assert check_input(Input(type="number"), "1" * 4000 + ",5").ok is False
