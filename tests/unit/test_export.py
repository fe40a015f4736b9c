"""Exports: every state and transition survives into Mermaid, DOT and SCXML; json/yaml reload unchanged."""
from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import flow_documents

from flows.export import EXPORT_FORMATS, export
from flows.export.labels import edge_label
from flows.export.scxml import BOTFLOW_NS, SCXML_NS
from flows.load import load, load_text
from flows.model import Flow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))
S, B = f"{{{SCXML_NS}}}", f"{{{BOTFLOW_NS}}}"


def load_example(path: Path) -> Flow:
    return load_text(path.read_bytes())


def tiny(**extra: Any) -> dict[str, Any]:
    """A small valid document to vary in tests."""
    doc: dict[str, Any] = {
        "format": "botflow/v1", "id": "tiny", "title": "Tiny", "start": "ask",
        "states": [
            {"id": "ask", "title": "Ask", "say": [{"text": "Да?"}]},
            {"id": "done", "title": "Done", "final": True, "say": [{"text": "Ok"}]},
        ],
        "transitions": [{"id": "yes", "from": "ask", "to": "done", "on": "button", "payload": "yes"}],
    }
    doc.update(extra)
    return doc


# --- a small DOT reader: enough of the grammar to check structure, quoting and escapes


_DOT_TOKEN = re.compile(r'\s+|(?P<q>"(?:[^"\\]|\\.)*")|(?P<arrow>->)|(?P<p>[{}\[\];,=])'
                        r"|(?P<id>[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?)", re.S)


def _dot_tokens(text: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(text):
        m = _DOT_TOKEN.match(text, pos)
        assert m, f"unexpected DOT text at {pos}: {text[pos:pos + 30]!r}"
        pos = m.end()
        if m.lastgroup:
            tokens.append(m.group(m.lastgroup))
    return tokens


def _dot_value(token: str) -> str:
    if not token.startswith('"'):
        return token
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), token[1:-1], flags=re.S)


def parse_dot(text: str) -> dict[str, Any]:
    """{"name", "graph", "nodes": {id: attrs}, "edges": [(src, dst, attrs)]}; fails on bad structure."""
    tokens = _dot_tokens(text)
    assert tokens[:1] == ["digraph"] and tokens[2] == "{" and tokens[-1] == "}"
    graph: dict[str, str] = {}
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    i, end = 3, len(tokens) - 1

    def attrs() -> dict[str, str]:
        nonlocal i
        out: dict[str, str] = {}
        if i < end and tokens[i] == "[":
            i += 1
            while tokens[i] != "]":
                key, eq, value = tokens[i:i + 3]
                assert eq == "=", tokens[i:i + 3]
                out[key] = _dot_value(value)
                i += 3
                if tokens[i] == ",":
                    i += 1
            i += 1
        return out

    while i < end:
        first = tokens[i]
        i += 1
        if tokens[i] == "=":
            graph[first] = _dot_value(tokens[i + 1])
            i += 2
        elif tokens[i] == "->":
            src, dst = _dot_value(first), _dot_value(tokens[i + 1])
            i += 2
            edges.append((src, dst, attrs()))
        elif first in ("node", "edge"):
            attrs()
        else:
            nodes[_dot_value(first)] = attrs()
        assert tokens[i] == ";", f"statement not closed at token {i}: {tokens[i]!r}"
        i += 1
    return {"name": _dot_value(tokens[1]), "graph": graph, "nodes": nodes, "edges": edges}


# --- SCXML reading


def scxml_parts(text: str) -> tuple[ET.Element, list[ET.Element], list[tuple[str, ET.Element]]]:
    """The root, its state/final children, and every transition (SCXML or botflow) with its source."""
    root = ET.fromstring(text.encode("utf-8"))
    states = [el for el in root if el.tag in (S + "state", S + "final")]
    transitions = []
    for el in root:
        if el.tag in (S + "state", S + "final"):
            transitions += [(el.get("id"), tr) for tr in el if tr.tag in (S + "transition", B + "transition")]
        elif el.tag == B + "transition":
            transitions.append((el.get(B + "source"), el))
    return root, states, transitions


# --- every example, every format


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_every_format_exports_every_example(path: Path, fmt: str) -> None:
    text, media_type = export(load_example(path), fmt)
    assert text.strip() and text.endswith("\n")
    assert media_type.split(";")[0] in {
        "json": "application/json", "yaml": "application/yaml", "mermaid": "text/vnd.mermaid",
        "dot": "text/vnd.graphviz", "scxml": "application/scxml+xml"}[fmt]


def test_unknown_format_names_the_formats() -> None:
    with pytest.raises(ValueError, match="mermaid"):
        export(load(tiny()), "png")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_document_exports_reload_to_the_same_document(path: Path, fmt: str) -> None:
    flow = load_example(path)
    again = load_text(export(flow, fmt)[0], fmt)
    assert again.document == flow.document
    # Diagrams come from the model alone, so a reloaded export draws the same picture.
    assert export(again, "dot") == export(flow, "dot")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_mermaid_has_every_state_edge_start_and_final(path: Path) -> None:
    flow = load_example(path)
    lines = [line.strip() for line in export(flow, "mermaid")[0].splitlines()]
    assert lines[0] == "stateDiagram-v2"
    for state in flow.states:
        assert f'state "{state.title}" as {state.id}' in lines
        assert (f"{state.id} --> [*]" in lines) == state.final
    assert f"[*] --> {flow.start}" in lines
    edges = Counter(line for line in lines if "-->" in line and "[*]" not in line)
    assert edges == Counter(f"{t.source} --> {t.target}: {edge_label(t)}" for t in flow.transitions)


def test_mermaid_labels_name_each_trigger() -> None:
    doc = tiny(states=[
        {"id": "ask", "title": "Ask", "input": {"type": "text", "save_as": "name", "max_attempts": 2}},
        {"id": "wait", "title": "Wait"},
        {"id": "done", "title": "Done", "final": True},
    ], transitions=[
        {"id": "a", "from": "ask", "to": "wait", "on": "input", "if": [{"var": "name", "op": "set"}]},
        {"id": "b", "from": "ask", "to": "done", "on": "invalid"},
        {"id": "c", "from": "wait", "to": "done", "on": "button", "payload": "yes"},
        {"id": "d", "from": "wait", "to": "done", "on": "text", "match": ["да", "yes"]},
        {"id": "e", "from": "wait", "to": "done", "on": "event", "name": "paid"},
        {"id": "f", "from": "wait", "to": "done", "on": "timeout", "after": 60},
        {"id": "g", "from": "wait", "to": "done", "on": "attachment", "kinds": ["image", "file"]},
        {"id": "h", "from": "wait", "to": "done", "on": "text", "pattern": "^\\d+$"},
        {"id": "i", "from": "wait", "to": "wait", "on": "else"},
    ])
    text = export(load(doc), "mermaid")[0]
    for line in ("ask --> wait: input [if]", "ask --> done: invalid", "wait --> done: button: yes",
                 "wait --> done: text: да|yes", "wait --> done: event: paid", "wait --> done: timeout 60s",
                 "wait --> done: attachment: image|file", "wait --> done: text: /^\\d+$/",
                 "wait --> wait: else"):
        assert f"    {line}\n" in text


def test_mermaid_escapes_what_breaks_the_grammar() -> None:
    doc = tiny()
    doc["states"][0]["title"] = 'Say "hi"; #1 <b>\nnext'
    doc["transitions"][0]["payload"] = "a;b#c"
    text = export(load(doc), "mermaid")[0]
    assert 'state "Say #quot;hi#quot;#59; #35;1 #lt;b#gt; next" as ask' in text
    assert "ask --> done: button: a#59;b#35;c" in text
    body = text.split("\n", 1)[1]
    assert ";" not in body.replace("#59;", "").replace("#quot;", "").replace("#35;", "") \
        .replace("#lt;", "").replace("#gt;", "")


def test_mermaid_aliases_state_ids_that_are_keywords() -> None:
    doc = tiny(start="note", states=[
        {"id": "note", "title": "Note"}, {"id": "end", "final": True}, {"id": "end_", "final": True}],
        transitions=[{"id": "t", "from": "note", "to": "end", "on": "else"},
                     {"id": "u", "from": "note", "to": "end_", "on": "button", "payload": "x"}])
    lines = export(load(doc), "mermaid")[0].splitlines()
    assert '    state "Note" as note_' in lines and '    state "end" as end__' in lines
    assert "    [*] --> note_" in lines and "    note_ --> end__: else" in lines
    assert "    note_ --> end_: button: x" in lines  # the real `end_` keeps its id


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_dot_parses_and_keeps_every_state_and_edge(path: Path) -> None:
    flow = load_example(path)
    dot = parse_dot(export(flow, "dot")[0])
    assert dot["name"] == flow.id and dot["graph"]["label"] == flow.title
    start_node = [n for n, a in dot["nodes"].items() if a.get("shape") == "point"]
    assert len(start_node) == 1
    assert (start_node[0], flow.start, {}) in dot["edges"]
    assert set(dot["nodes"]) - set(start_node) == {s.id for s in flow.states}
    for state in flow.states:
        attrs = dot["nodes"][state.id]
        assert (attrs.get("shape") == "doublecircle") == state.final
        assert attrs["label"] == f"{state.title}\n({state.id})"
    edges = [e for e in dot["edges"] if e[0] != start_node[0]]
    assert sorted((s, d, a["id"], a["label"]) for s, d, a in edges) == \
        sorted((t.source, t.target, t.id, edge_label(t)) for t in flow.transitions)


def test_dot_escapes_quotes_backslashes_and_line_breaks() -> None:
    doc = tiny(title='Quote " and \\ back')
    doc["states"][0]["title"] = 'Line one\nline "two" \\N'
    doc["transitions"][0]["payload"] = 'x"y'
    dot = parse_dot(export(load(doc), "dot")[0])
    assert dot["graph"]["label"] == 'Quote " and \\ back'
    assert dot["nodes"]["ask"]["label"] == 'Line one\nline "two" \\N\n(ask)'
    assert dot["edges"][-1][2]["label"] == 'button: x"y'


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_scxml_keeps_every_state_and_transition(path: Path) -> None:
    flow = load_example(path)
    root, states, transitions = scxml_parts(export(flow, "scxml")[0])
    assert root.tag == S + "scxml" and root.get("version") == "1.0"
    assert root.get("initial") == flow.start
    assert len(states) == len(flow.states)
    assert {el.get("id") for el in states if el.tag == S + "final"} == {s.id for s in flow.states if s.final}
    assert {el.get("id") for el in states if el.tag == S + "state"} == {s.id for s in flow.states if not s.final}
    assert len(transitions) == len(flow.transitions)
    assert [(src, el.get("target"), el.get(B + "id"), el.get(B + "on")) for src, el in transitions] == \
        [(t.source, t.target, t.id, t.on) for s in flow.states for t in flow.outgoing(s.id)]
    for _, el in transitions:
        tr = next(t for t in flow.transitions if t.id == el.get(B + "id"))
        assert (el.get("cond") is not None) == bool(tr.conditions)
        assert [(a.get("location"), json.loads(a.get("expr"))) for a in el.findall(S + "assign")] == list(tr.set)


def test_scxml_event_descriptors_and_actions() -> None:
    flow = load_example(ROOT / "examples" / "order.json")
    _, _, transitions = scxml_parts(export(flow, "scxml")[0])
    by_id = {el.get(B + "id"): el for _, el in transitions}
    paid = by_id["payment_succeeded"]
    assert paid.get("event") == "event.payment" and paid.get(B + "name") == "payment"
    assert paid.get("cond") == 'payment_status == "succeeded"'
    send = paid.find(S + "send")
    assert send is not None and send.get("target") == "https://crm.example/orders"
    assert by_id["coffee_chosen"].get("event") == "button.coffee"
    assert by_id["wholesale_quantity"].get("cond") == "quantity >= 10"
    assert by_id["retail_quantity"].get("cond") is None


def test_scxml_keeps_self_loops_parallel_edges_exits_of_finals_and_dangling_edges() -> None:
    doc = tiny(states=[
        {"id": "ask", "title": 'A <b> & "q"', "input": {"type": "text", "save_as": "x"}},
        {"id": "done", "final": True},
    ], transitions=[
        {"id": "loop", "from": "ask", "to": "ask", "on": "text", "match": ["ещё"]},
        {"id": "one", "from": "ask", "to": "done", "on": "button", "payload": "go on"},
        {"id": "two", "from": "ask", "to": "done", "on": "input"},
        {"id": "exit", "from": "done", "to": "ask", "on": "else"},
        {"id": "lost", "from": "ghost", "to": "nowhere", "on": "timeout", "after": 1.5},
    ])
    root, states, transitions = scxml_parts(export(load(doc), "scxml")[0])
    assert [el.get(B + "title") for el in states] == ['A <b> & "q"', None]
    got = [(src, el.tag, el.get("target"), el.get(B + "id"), el.get("event")) for src, el in transitions]
    assert got == [
        ("ask", S + "transition", "ask", "loop", "text"),
        ("ask", S + "transition", "done", "one", "button"),  # "go on" is no event token
        ("ask", S + "transition", "done", "two", "input"),
        ("done", B + "transition", "ask", "exit", "else"),
        ("ghost", B + "transition", "nowhere", "lost", "timeout"),
    ]
    assert transitions[1][1].get(B + "payload") == "go on"
    assert json.loads(transitions[0][1].get(B + "match")) == ["ещё"]
    assert transitions[4][1].get(B + "after") == "1.5"


def test_scxml_without_start_has_no_initial() -> None:
    doc = tiny()
    del doc["start"]
    root, _, _ = scxml_parts(export(load(doc), "scxml")[0])
    assert root.get("initial") is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flow_documents())
def test_any_loadable_flow_exports_with_nothing_lost(doc: dict[str, Any]) -> None:
    flow = load(copy.deepcopy(doc))
    _, states, transitions = scxml_parts(export(flow, "scxml")[0])
    assert len(states) == len(flow.states)
    assert Counter(el.get(B + "id") for _, el in transitions) == Counter(t.id for t in flow.transitions)
    dot = parse_dot(export(flow, "dot")[0])
    assert len([e for e in dot["edges"] if "id" in e[2]]) == len(flow.transitions)
    mermaid = export(flow, "mermaid")[0].splitlines()
    assert len([line for line in mermaid if "-->" in line and "[*]" not in line]) == len(flow.transitions)
