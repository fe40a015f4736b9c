"""Transition guards (`if`) evaluated as data: no eval, no template engine."""
from __future__ import annotations

from typing import Any, Mapping

from flows.inputs import NUMBER_RE
from flows.limits import MAX_NUMBER_TEXT
from flows.model import Condition
from flows.patterns import search
from flows.templates import value_text

_MISSING = object()


def as_number(value: Any) -> int | float | None:
    """The numeric reading of a value, or None when it is not a number."""
    kind = value.__class__
    if kind is int or kind is float:
        number: int | float = value
        return number
    if kind is str:
        text = value.strip()
        if len(text) > MAX_NUMBER_TEXT or NUMBER_RE.fullmatch(text) is None:
            return None
        if "." in text or "," in text:
            return float(text.replace(",", "."))
        return int(text)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return value  # a subclass of int or float
    return None


def _compare(left: Any, right: Any) -> int:
    """-1, 0 or 1: numbers when both sides are numbers, else case-sensitive strings."""
    a = as_number(left)
    b = as_number(right) if a is not None else None
    if a is None or b is None:
        x, y = value_text(left), value_text(right)
        return (x > y) - (x < y)
    return (a > b) - (a < b)


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def check(cond: Condition, data: Mapping[str, Any]) -> bool:
    """Whether one condition holds for the data."""
    op = cond.op
    value = data.get(cond.var, _MISSING)
    if value is _MISSING or value is None:
        return op in ("unset", "ne", "not_in")
    if op == "set":
        return True
    if op == "unset":
        return False
    if op == "eq":
        return _compare(value, cond.value) == 0
    if op == "ne":
        return _compare(value, cond.value) != 0
    if op == "lt":
        return _compare(value, cond.value) < 0
    if op == "le":
        return _compare(value, cond.value) <= 0
    if op == "gt":
        return _compare(value, cond.value) > 0
    if op == "ge":
        return _compare(value, cond.value) >= 0
    if op == "in":
        return any(_compare(value, item) == 0 for item in _as_list(cond.value))
    if op == "not_in":
        return all(_compare(value, item) != 0 for item in _as_list(cond.value))
    if op == "matches":
        return search(value_text(cond.value), value_text(value))
    return False


def holds(conditions: tuple[Condition, ...], data: Mapping[str, Any]) -> bool:
    """Whether all conditions hold (an empty `if` always holds)."""
    for cond in conditions:
        if not check(cond, data):
            return False
    return True


def describe(cond: Condition) -> str:
    """A condition as a short phrase for reasons and editors."""
    if cond.op in ("set", "unset"):
        return f"{cond.var} {cond.op}"
    return f"{cond.var} {cond.op} {value_text(cond.value)}"
