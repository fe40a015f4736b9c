"""The quick well-formedness check agrees with the detailed checker on valid and damaged documents."""
from __future__ import annotations

import copy
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import flow_documents, paths
from test_load import CASES, base, mutated

from flows.fastcheck import fine_elements, well_formed
from flows.model import INPUT_TYPES, OPS, TRIGGERS
from flows.schema import format_problems

# Replacement values: right and wrong types, words the format knows, data JSON cannot hold.


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


ODD = st.one_of(
    st.sampled_from([math.nan, math.inf, "\ud800", ("a",), b"x", {1: "a"}, {"x-a": math.nan}, 1.5, -1, 0,
                     2 ** 53, 2 ** 53 + 1, -(10 ** 400), 1e300, 31_536_000, 31_536_001]),
    st.builds(_deep, st.integers(55, 70)))
WORDS = st.sampled_from(["text", "button", "timeout", "event", "eq", "in", "set", "matches", "webhook", "clear",
                         "choice", "regex", "attachment", "image", "ask_name", "done", "botflow/v1", "x-a", "([",
                         "https://x.example", "", " ", "Ж", "/help", "any", "command", "javascript:alert(1)",
                         "max://chat/1", "http://127.1/", "http://[::1]/", "contact", "location", "(a)\\1", "(?=a)"])
KEYS = st.sampled_from(["id", "on", "type", "from", "to", "op", "value", "match", "pattern", "payload", "kinds",
                        "name", "after", "text", "buttons", "url", "var", "x-k", "min", "choices", "reply",
                        "save_as", "max_attempts", "min_length", "final", "if", "set", "actions", "request",
                        "\ud800"])
# Another valid choice for a field that decides which options belong.
ENUMS = {"on": TRIGGERS, "type": INPUT_TYPES + ("webhook", "clear"), "op": OPS}
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 5000), st.floats(allow_nan=True), st.text(max_size=4),
              WORDS, ODD),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=8)


def _damage(doc: dict[str, Any], data: st.DataObject) -> None:
    """Replace, delete or add one thing somewhere in the document."""
    where = data.draw(st.sampled_from(paths(doc)))
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    action = data.draw(st.sampled_from(["replace", "word", "enum", "delete", "add"]))
    if where and action == "enum" and where[-1] in ENUMS:
        target[where[-1]] = data.draw(st.sampled_from(ENUMS[where[-1]]))
    elif where and action in ("word", "enum"):
        target[where[-1]] = data.draw(WORDS)
    elif where and action == "replace":
        target[where[-1]] = data.draw(VALUES)
    elif where and action == "delete":
        del target[where[-1]]
    else:
        inner = target[where[-1]] if where else doc
        if isinstance(inner, dict):
            inner[data.draw(KEYS)] = data.draw(VALUES)
        elif isinstance(inner, list):
            inner.append(data.draw(VALUES))


def agree(doc: dict[str, Any]) -> None:
    details = format_problems(doc)
    assert well_formed(doc) == (not details), details
    # Skipping the elements the quick check passes changes no detail, nor their order.
    assert format_problems(doc, fine_elements(doc)) == details


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flow_documents())
def test_valid_documents_pass_the_quick_check(doc: dict[str, Any]) -> None:
    assert format_problems(doc, fine_elements(doc)) == []
    assert well_formed(doc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flow_documents(max_states=2, max_transitions=3), st.data())
def test_quick_check_agrees_with_the_detailed_one_on_damaged_documents(
        doc: dict[str, Any], data: st.DataObject) -> None:
    # Several damaged copies per drawn document: drawing documents is the slow part.
    for _ in range(10):
        damaged = copy.deepcopy(doc)
        for _ in range(data.draw(st.integers(1, 2))):
            _damage(damaged, data)
        agree(damaged)


def test_every_listed_format_problem_fails_the_quick_check() -> None:
    for name, (change, _path, _words) in CASES.items():
        doc = mutated(change)
        assert not well_formed(doc), name
        agree(doc)


def test_json_only_problems_fail_the_quick_check() -> None:
    for value in (math.nan, "\udc00", ("a",), {2: "a"}, b"x", {1.5}):
        for where in ("x-data", "layout"):
            doc = base()
            doc[where] = {"a": [value]}
            assert not well_formed(doc), (where, value)
            agree(doc)


def test_subclasses_of_json_types_go_to_the_detailed_checker() -> None:
    class Text(str):
        pass

    doc = base()
    doc["title"] = Text("Demo")
    assert not well_formed(doc)
    assert format_problems(doc, fine_elements(doc)) == []
    assert well_formed(copy.deepcopy(base()))
