"""The one rule for text the product stores: no NUL character and no unpaired surrogate, anywhere.

PostgreSQL cannot store a NUL in text, and a lone surrogate is no UTF-8 at all; request fields, flow
documents (titles, messages, ids, keys) and the simulator's messages are all held to it.
"""
from __future__ import annotations

import json
from typing import Any

UNCLEAN = "contains a NUL character or an unpaired surrogate"


def unclean_at(value: dict[str, Any] | list[Any]) -> str | None:
    """The path below `value` (".text", "[2]") of the first key or string that cannot be stored, or None."""
    if _surely_clean(value):
        return None
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:  # a loop, not recursion: a body may nest deeper than Python's stack
        node, path = stack.pop()
        if isinstance(node, dict):
            for key, sub in node.items():
                if isinstance(key, str) and not clean_text(key):
                    return path
                # A key that is no string (YAML allows numbers) is named by its kind: printing a
                # 5,000-digit number is itself refused by Python.
                stack.append((sub, f"{path}.{key}" if isinstance(key, str) else f"{path}[{type(key).__name__} key]"))
        elif isinstance(node, list):
            stack.extend((sub, f"{path}[{i}]") for i, sub in enumerate(node))
        elif isinstance(node, str) and not clean_text(node):
            return path
    return None


def _surely_clean(value: Any) -> bool:
    """One pass at C speed for the usual, clean document (a sixth of the time of the walk below): its JSON text
    escapes a NUL as \\u0000 and keeps a lone surrogate as it is, which then does not encode. False only means
    "walk it": a value JSON cannot write, or a text that merely reads \\u0000."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return "\\u0000" not in text and clean_text(text)


def clean_text(value: str) -> bool:
    """Whether a string can be stored as it is (no NUL, valid UTF-8)."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
