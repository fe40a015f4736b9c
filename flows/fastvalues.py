"""Quick checks of values inside a flow document: strings, numbers, free JSON data, key sets, keyboards.

Each answers yes or no, never why (the detailed checker in `flows.schema` says why); see `flows.fastcheck`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from flows.patterns import pattern_problem
from flows.model import ATTACHMENT_KINDS

KINDS = frozenset(ATTACHMENT_KINDS)
BUTTON_KEYS = frozenset(("text", "payload", "url"))
_isfinite = math.isfinite

# Every check takes `add`, the append of a list of the strings it accepted: their UTF-8 check runs once,
# on all of them joined (a lone surrogate stays one when joined), instead of once per string.
Add = Callable[[str], None]


def utf8_ok(text: str) -> bool:
    """Whether the text holds no lone surrogate."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_ok(value: Any, add: Add) -> bool:
    """A string (its UTF-8 check is left to the caller, through `add`)."""
    if type(value) is not str:
        return False
    add(value)
    return True


def scalar_ok(value: Any, add: Add) -> bool:
    """A single JSON value: null, a boolean, a finite number or a string."""
    kind = type(value)
    if kind is str:
        add(value)
        return True
    return value is None or kind is bool or kind is int or (kind is float and _isfinite(value))


def number_ok(value: Any) -> bool:
    """An int or a finite float, never a boolean."""
    kind = type(value)
    return kind is int or (kind is float and _isfinite(value))


def data_ok(value: Any, add: Add) -> bool:
    """Anything JSON can hold: string keys, finite numbers, no other types."""
    stack = [value]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            for key in value:
                if type(key) is not str:
                    return False
                add(key)
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif not scalar_ok(value, add):
            return False
    return True


def extras_ok(obj: dict[Any, Any], allowed: frozenset[str], add: Add) -> bool:
    """Keys outside `allowed` are all `x-` extension keys holding JSON data."""
    for key, value in obj.items():
        if key in allowed:
            continue
        if type(key) is not str or not key.startswith("x-") or not data_ok(value, add):
            return False
        add(key)
    return True


def regex_ok(value: Any, add: Add) -> bool:
    """A string that compiles as a Python regular expression."""
    return text_ok(value, add) and pattern_problem(value) is None


def texts_ok(value: Any, add: Add, nonempty: bool) -> bool:
    """A list of strings, non-empty when `nonempty`."""
    if type(value) is not list or (nonempty and not value):
        return False
    for entry in value:
        if type(entry) is not str:
            return False
        add(entry)
    return True


def kinds_ok(value: Any) -> bool:
    """A non-empty list of attachment kinds."""
    if type(value) is not list or not value:
        return False
    for entry in value:
        if type(entry) is not str or entry not in KINDS:
            return False
    return True


def keyboard_ok(rows: Any, add: Add) -> bool:
    """Rows of buttons, each a callback (`payload`) or a link (`url`) button."""
    if type(rows) is not list:
        return False
    for row in rows:
        if type(row) is not list:
            return False
        for button in row:
            if type(button) is not dict:
                return False
            if not BUTTON_KEYS.issuperset(button) and not extras_ok(button, BUTTON_KEYS, add):
                return False
            text = button.get("text")
            callback = "payload" in button
            if callback == ("url" in button):
                return False  # a button is either a callback or a link button
            target = button["payload"] if callback else button["url"]
            if type(text) is not str or type(target) is not str:
                return False
            add(text)
            add(target)
    return True
