"""Building blocks for checking a raw document: paths, how values read in messages, the report."""
from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable
from typing import Any

from flows.limits import MAX_DEPTH, MAX_NUMBER
from flows.said import Said, detail

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def join(path: str, key: Any) -> str:
    """The path of `key` inside the object at `path`: `a.b`, or `a["odd key"]`."""
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    text = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else shown_key(key)
    return f"{path}[{text}]"


def shown_key(key: Any) -> str:
    """A key that is not a string, as a path or a message shows it."""
    if isinstance(key, int) and not isinstance(key, bool):
        return show_number(key)
    return repr(key)


def item(path: str, index: int) -> str:
    """The path of list element `index`."""
    return f"{path}[{index}]"


def kind(value: Any) -> str:
    """How a value reads in a message: 'a string ("x")', 'a number (3)', 'null', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    if isinstance(value, (int, float)):
        return f"a number ({show_number(value)})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({json.dumps(shown, ensure_ascii=False)})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def show_number(value: int | float) -> str:
    """A number as a message shows it; a huge one by its size (printing it would be unreadable)."""
    if isinstance(value, int) and not -10 ** 30 < value < 10 ** 30:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"a {digits}-digit number"
    return repr(value)


def too_large(value: int | float) -> str:
    """The sentence for a number past 2^53 in magnitude."""
    return Said(f"{show_number(value)} is too large: numbers in a flow are at most 2^53 ({MAX_NUMBER:,}) in"
                " magnitude; write a smaller number", "number_too_large", value=show_number(value))


def is_number(value: Any) -> bool:
    """A JSON number: int or finite float, never a boolean."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def is_int(value: Any) -> bool:
    """A whole JSON number written without a fraction, never a boolean."""
    return isinstance(value, int) and not isinstance(value, bool)


def article(word: str) -> str:
    """The word with "a" or "an" before it."""
    first = word.lstrip('"')[:1].lower()
    return f"{'an' if first and first in 'aeiou' else 'a'} {word}"


def quoted(names: Iterable[str]) -> str:
    """`a, b, c` for a message."""
    return ", ".join(names)


def suggestion(word: Any, choices: Iterable[str]) -> str:
    """'; did you mean "x"?' when a close choice exists, else ''."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f'; did you mean "{close[0]}"?' if close else ""


class Report:
    """Collects one detail per problem; a path is reported at most once (the first problem wins)."""

    # `fine` holds the ids of list elements already known to hold no problem (they are not walked).

    def __init__(self, fine: set[int] | frozenset[int] = frozenset()) -> None:
        self.details: list[dict[str, Any]] = []
        self._paths: set[str] = set()
        self.fine = fine

    def add(self, path: str, message: str) -> None:
        """Record a problem at `path` unless that path already has one."""
        if path in self._paths:
            return
        self._paths.add(path)
        self.details.append(detail(path, message))

    def __bool__(self) -> bool:
        return bool(self.details)


_SURROGATE = "contains an unpaired surrogate escape (\\ud800-\\udfff); write real Unicode characters"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_data_problems(document: Any, report: Report) -> None:
    """Report non-string keys, values JSON cannot hold, numbers past 2^53 and nesting past MAX_DEPTH."""
    # List elements whose id is in `report.fine` are known to hold nothing to report and are skipped.
    fine = report.fine
    stack: list[tuple[Any, str, int]] = [(document, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        children: list[tuple[Any, str]] = []
        if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
            report.add(path, f"is nested {depth} levels deep; a flow document may nest at most {MAX_DEPTH}"
                             " levels, so flatten this value")
        elif isinstance(value, dict):
            for key, sub in value.items():
                if not isinstance(key, str):
                    report.add(join(path, key), f"keys must be strings; quote {shown_key(key)} in the document")
                elif not _encodable(key):
                    report.add(join(path, key), _SURROGATE)
                else:
                    children.append((sub, join(path, key)))
        elif isinstance(value, list):
            children = [(sub, item(path, i)) for i, sub in enumerate(value) if id(sub) not in fine]
        elif isinstance(value, str):
            if not _encodable(value):
                report.add(path, _SURROGATE)
        elif isinstance(value, float) and not math.isfinite(value):
            report.add(path, f"{value!r} is not a number JSON can hold; write a finite number")
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and not -MAX_NUMBER <= value <= MAX_NUMBER:
            report.add(path, too_large(value))
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            report.add(path, f"{kind(value)} is not JSON data; write it as a quoted string")
        stack.extend([(sub, where, depth + 1) for sub, where in reversed(children)])  # in document order
