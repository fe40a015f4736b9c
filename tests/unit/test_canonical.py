"""Canonical JSON, the semantic hash, and JSON/YAML dumps that load back unchanged."""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import flow_documents

from flows.canonical import canonical_json, content_hash, dump_json, dump_yaml, ordered
from flows.load import load, parse_text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "registration.json"


def example() -> dict[str, Any]:
    return json.loads(EXAMPLE.read_text(encoding="utf-8"))


def reversed_keys(value: Any) -> Any:
    """The same data with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(v) for v in value]
    return value


def test_canonical_json_is_sorted_compact_and_keeps_unicode() -> None:
    assert canonical_json({"b": [1, {"d": "й", "c": None}], "a": True}) == '{"a":true,"b":[1,{"c":null,"d":"й"}]}'


def test_hash_is_sha256_of_canonical_json_without_layout() -> None:
    doc = example()
    without = {k: v for k, v in doc.items() if k != "layout"}
    expected = hashlib.sha256(canonical_json(without).encode("utf-8")).hexdigest()
    assert content_hash(doc) == f"sha256:{expected}"


def test_hash_ignores_layout_and_key_order() -> None:
    doc = example()
    moved = copy.deepcopy(doc)
    moved["layout"]["ask_name"] = {"x": 999, "y": -5}
    del moved["layout"]["refused"]
    no_layout = {k: v for k, v in doc.items() if k != "layout"}
    assert content_hash(doc) == content_hash(moved) == content_hash(no_layout) == content_hash(reversed_keys(doc))


SEMANTIC_CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "title": lambda d: d.update(title="Другое"),
    "start": lambda d: d.update(start="ask_phone"),
    "a say text": lambda d: d["states"][0]["say"][0].update(text="Здравствуйте!"),
    "input type": lambda d: d["states"][2]["input"].update(type="text"),
    "state order": lambda d: d["states"].reverse(),
    "transition order": lambda d: d["transitions"].reverse(),
    "a payload": lambda d: d["transitions"][3].update(payload="ok"),
    "a set value": lambda d: d["transitions"][3]["set"].update(pdn_accepted="да"),
    "session_ttl": lambda d: d["settings"].update(session_ttl=3600),
    "a command": lambda d: d["commands"].update(help=None),
    "an x- key": lambda d: d.update({"x-owner": "sales"}),
    "int vs float": lambda d: d["settings"].update(session_ttl=1800.0),
}


@pytest.mark.parametrize("name", list(SEMANTIC_CHANGES))
def test_hash_changes_with_anything_semantic(name: str) -> None:
    doc = example()
    changed = copy.deepcopy(doc)
    SEMANTIC_CHANGES[name](changed)
    assert content_hash(changed) != content_hash(doc)


def test_hash_of_normalised_document_is_stable_for_generated_ids() -> None:
    doc = example()
    for tr in doc["transitions"]:
        del tr["id"]
    first = load(doc)
    assert content_hash(first.document) == content_hash(load(copy.deepcopy(doc)).document)
    assert content_hash(load(first.document).document) == content_hash(first.document)


def test_dump_json_puts_top_level_keys_in_spec_order() -> None:
    doc = reversed_keys(example())
    doc["x-owner"] = "sales"
    text = dump_json(doc)
    assert list(json.loads(text)) == [
        "format", "id", "title", "start", "settings", "commands", "states", "transitions", "layout", "x-owner"]
    assert text.startswith('{\n  "format": "botflow/v1",\n  "id": "registration",')
    assert "Регистрация" in text
    first_transition = json.loads(text)["transitions"][0]
    assert list(first_transition)[:4] == ["id", "from", "to", "on"]
    assert json.loads(text) == doc


def test_dump_yaml_is_readable_and_loads_back() -> None:
    doc = example()
    text = dump_yaml(doc)
    assert text.startswith("format: botflow/v1\nid: registration\n")
    assert "Регистрация" in text  # unicode written as is, not escaped
    assert parse_text(text) == doc


@pytest.mark.parametrize("tricky", ["on", "yes", "no", "2024-01-01", "1e3", "0x1F", "null", "~", "- a", "a: b",
                                    "#x", " lead", "trail ", "\x85", "a\u2028b", "\t", "", "'\"", "{x}", "1_000",
                                    "True", "=", "<<"])
def test_yaml_round_trips_tricky_strings(tricky: str) -> None:
    doc = {"format": "botflow/v1", "id": "a", "states": [{"id": "s", "say": [{"text": tricky}]}],
           "transitions": [{"id": tricky or "x", "from": "s", "to": "s", "on": "button", "payload": tricky}]}
    assert parse_text(dump_yaml(doc)) == doc


def test_shared_objects_are_written_out_not_aliased() -> None:
    button = {"text": "Да", "payload": "yes"}
    doc = {"format": "botflow/v1", "id": "a",
           "states": [{"id": "s", "say": [{"text": "?", "buttons": [[button], [button]]}]}]}
    assert parse_text(dump_yaml(doc)) == doc


PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(flow_documents())
def test_json_dump_round_trips_document_and_hash(doc: dict[str, Any]) -> None:
    flow = load(doc)
    again = load(parse_text(dump_json(flow.document)))
    assert again.document == flow.document
    assert content_hash(again.document) == content_hash(flow.document)
    assert again == flow


@PROPERTY
@given(flow_documents())
def test_yaml_dump_round_trips_document_and_hash(doc: dict[str, Any]) -> None:
    flow = load(doc)
    again = load(parse_text(dump_yaml(flow.document), "yaml"))
    assert again.document == flow.document
    assert content_hash(again.document) == content_hash(flow.document)
    assert again == flow


@PROPERTY
@given(flow_documents())
def test_generated_documents_keep_their_references_valid(doc: dict[str, Any]) -> None:
    flow = load(doc)
    ids = {s.id for s in flow.states}
    assert flow.start in ids
    assert all(t.source in ids and t.target in ids for t in flow.transitions)
    assert len({t.id for t in flow.transitions}) == len(flow.transitions)


# Any data, including what JSON cannot hold or writes in its own way: NaN, non-string keys, tuples.
ANY_DATA = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6),
              st.sampled_from([("a", 1), -0.0, "\u2028", '"\\', "\ud800"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.one_of(st.text(max_size=3), st.sampled_from(["id", "states", 1, None, True, 2.5])), inner, max_size=3)),
    max_leaves=10)


def _json_module(document: Any) -> str:
    try:
        return json.dumps(ordered(document), indent=2, ensure_ascii=False) + "\n"
    except (TypeError, ValueError) as exc:
        return repr(exc)


def _ours(document: Any) -> str:
    try:
        return dump_json(document)
    except (TypeError, ValueError) as exc:
        return repr(exc)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(flow_documents(), st.dictionaries(st.sampled_from(["states", "transitions", "x"]), ANY_DATA)))
def test_dump_json_writes_what_the_json_module_writes(document: dict[str, Any]) -> None:
    assert _ours(document) == _json_module(document)
