"""Conditions as data: every op, numbers vs strings, missing keys."""
from __future__ import annotations

import pytest

from flows.conditions import as_number, check, holds
from flows.model import OPS, Condition


def c(var, op, value=None):
    return Condition(var, op, value)


@pytest.mark.parametrize("op,value,data,expected", [
    ("eq", 18, {"v": "18"}, True),
    ("eq", "18.0", {"v": 18}, True),
    ("eq", "18,5", {"v": 18.5}, True),
    ("eq", "Да", {"v": "да"}, False),           # strings are case-sensitive
    ("ne", "Да", {"v": "да"}, True),
    ("lt", 9, {"v": "10"}, False),              # numbers: 10 < 9 is false
    ("lt", "9", {"v": "10"}, False),
    ("lt", "b", {"v": "a"}, True),              # strings: "a" < "b"
    ("lt", "9", {"v": "10a"}, True),            # "10a" is not a number: "10a" < "9" as strings
    ("le", 10, {"v": 10}, True),
    ("gt", 2, {"v": 10}, True),
    ("ge", 10.5, {"v": "10,5"}, True),
    ("ge", 11, {"v": "10,5"}, False),
    ("eq", True, {"v": True}, True),
    ("eq", "true", {"v": True}, True),
    ("in", ["a", "b"], {"v": "b"}, True),
    ("in", [1, 2], {"v": "2"}, True),
    ("in", ["a"], {"v": "A"}, False),
    ("not_in", ["a", "b"], {"v": "c"}, True),
    ("not_in", ["a", "b"], {"v": "a"}, False),
    ("matches", r"^\d{3}$", {"v": "123"}, True),
    ("matches", r"\d", {"v": "a1"}, True),     # searched, not anchored
    ("matches", "abc", {"v": "ABC"}, False),
    ("matches", r"^1", {"v": 12}, True),
    ("set", None, {"v": ""}, True),
    ("unset", None, {"v": 0}, False),
])
def test_ops(op, value, data, expected):
    assert check(c("v", op, value), data) is expected


@pytest.mark.parametrize("op", OPS)
def test_missing_key_satisfies_only_unset_ne_not_in(op):
    expected = op in ("unset", "ne", "not_in")
    value = ["x"] if op in ("in", "not_in") else "x"
    assert check(c("v", op, value), {}) is expected
    assert check(c("v", op, value), {"v": None}) is expected  # null counts as missing


def test_value_is_a_literal_not_a_template():
    assert check(c("v", "eq", "{other}"), {"v": "{other}", "other": "x"})
    assert not check(c("v", "eq", "{other}"), {"v": "x", "other": "x"})


def test_all_conditions_must_hold():
    conds = (c("a", "eq", 1), c("b", "set"))
    assert holds(conds, {"a": "1", "b": "x"})
    assert not holds(conds, {"a": "1"})
    assert holds((), {})


@pytest.mark.parametrize("raw,number", [("5", 5), (" -5 ", -5), ("1,5", 1.5), ("+2.25", 2.25), (3, 3), (2.5, 2.5)])
def test_number_syntax(raw, number):
    assert as_number(raw) == number


@pytest.mark.parametrize("raw", ["1e3", "1.", ".5", "", "abc", True, None, [1], {"a": 1}, "٣"])
def test_not_numbers(raw):
    assert as_number(raw) is None
