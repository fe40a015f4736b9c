"""Building blocks for checking a raw document: paths, type checks and problem messages."""
from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from flows.patterns import pattern_problem

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

Check = Callable[[Any, str], None]


def join(path: str, key: Any) -> str:
    """The path of `key` inside the object at `path`: `a.b`, or `a["odd key"]`."""
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    text = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else repr(key)
    return f"{path}[{text}]"


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
        return f"a number ({value!r})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({json.dumps(shown, ensure_ascii=False)})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


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

    def __init__(self) -> None:
        self.details: list[dict[str, str]] = []
        self._paths: set[str] = set()

    def add(self, path: str, message: str) -> None:
        """Record a problem at `path` unless that path already has one."""
        if path in self._paths:
            return
        self._paths.add(path)
        self.details.append({"path": path, "message": message})

    def __bool__(self) -> bool:
        return bool(self.details)


_SURROGATE = "contains an unpaired surrogate escape (\\ud800-\\udfff); write real Unicode characters"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_data_problems(document: Any, report: Report, fine: set[int] | frozenset[int] = frozenset()) -> None:
    """Report keys that are not strings and values JSON cannot hold (dates, NaN, binary, sets).

    List elements whose id is in `fine` are known to hold nothing to report and are skipped.
    """
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        value, path = stack.pop()
        children: list[tuple[Any, str]] = []
        if isinstance(value, dict):
            for key, sub in value.items():
                if not isinstance(key, str):
                    report.add(join(path, key), f"keys must be strings; quote {key!r} in the document")
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
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            report.add(path, f"{kind(value)} is not JSON data; write it as a quoted string")
        stack.extend(reversed(children))  # reversed so problems come out in document order


class Checker:
    """Type checks that report into one Report."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def add(self, path: str, message: str) -> None:
        """Record a problem."""
        self.report.add(path, message)

    def fields(
        self, obj: Any, path: str, spec: dict[str, Check | None], *, what: str,
        required: Iterable[str] = (), foreign: Callable[[str], str] | None = None,
    ) -> bool:
        """Check an object: its type, each known field, unknown fields, missing required fields."""
        if not isinstance(obj, dict):
            self.add(path, f"{what} must be an object, not {kind(obj)}")
            return False
        for key, value in obj.items():
            if isinstance(key, str) and key.startswith("x-"):
                continue  # extension data: never checked
            sub = join(path, key)
            if key in spec:
                check = spec[key]
                if check is not None:
                    check(value, sub)
                continue
            hint = foreign(key) if foreign and isinstance(key, str) else ""
            hint = hint or suggestion(key, spec)
            self.add(sub, f"unknown field {json.dumps(key, ensure_ascii=False) if isinstance(key, str) else repr(key)}"
                          f" in {what}{hint}. Allowed here: {quoted(spec)}; remove it, or prefix it"
                          ' with "x-" to keep your own data')
        for key in required:
            if key not in obj:
                self.add(join(path, key), f'{what} needs the field "{key}"')
        return True

    def string(self, value: Any, path: str, *, nonempty: bool = False) -> bool:
        """A string (optionally non-empty)."""
        if not isinstance(value, str):
            self.add(path, f"must be a string, not {kind(value)}")
            return False
        if nonempty and not value.strip():
            self.add(path, "must not be empty")
            return False
        return True

    def number(self, value: Any, path: str, *, minimum: float | None = None) -> bool:
        """A number (not a boolean, not quoted), at least `minimum`."""
        if not is_number(value):
            hint = "; write it without quotes" if isinstance(value, str) else ""
            self.add(path, f"must be a number, not {kind(value)}{hint}")
            return False
        if minimum is not None and value < minimum:
            self.add(path, f"must be at least {minimum:g}, not {value!r}")
            return False
        return True

    def integer(self, value: Any, path: str, *, minimum: int) -> bool:
        """A whole number at least `minimum`."""
        if not is_int(value):
            self.add(path, f"must be a whole number (at least {minimum}), not {kind(value)}")
            return False
        if value < minimum:
            self.add(path, f"must be at least {minimum}, not {value}")
            return False
        return True

    def boolean(self, value: Any, path: str) -> bool:
        """true or false."""
        if not isinstance(value, bool):
            self.add(path, f"must be true or false, not {kind(value)}")
            return False
        return True

    def identifier(self, value: Any, path: str) -> bool:
        """A data key usable as a `{placeholder}`: letters, digits and `_`, not starting with a digit."""
        if not self.string(value, path):
            return False
        if not IDENTIFIER.fullmatch(value):
            self.add(path, f"{json.dumps(value, ensure_ascii=False)} is not a valid data key; use Latin"
                           " letters, digits and _, starting with a letter or _ (e.g. phone_number)")
            return False
        return True

    def choice(self, value: Any, path: str, options: Iterable[str], *, what: str) -> bool:
        """One of a fixed set of words."""
        options = tuple(options)
        if isinstance(value, str) and value in options:
            return True
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else kind(value)
        self.add(path, f"unknown {what} {shown}; expected one of {quoted(options)}{suggestion(value, options)}")
        return False

    def regex(self, value: Any, path: str) -> bool:
        """A pattern in Python `re` syntax without backreferences and lookaround."""
        if not self.string(value, path):
            return False
        problem = pattern_problem(value)
        if problem:
            self.add(path, f"the regular expression {problem}; fix the pattern"
                           " (Python syntax without backreferences or lookaround, e.g. ^\\d{5}$)")
            return False
        return True

    def strings(self, value: Any, path: str, *, nonempty: str = "") -> bool:
        """A list of strings; when `nonempty` is given, an empty list is that problem."""
        if not isinstance(value, list):
            self.add(path, f"must be a list of strings, not {kind(value)}")
            return False
        if nonempty and not value:
            self.add(path, nonempty)
            return False
        ok = True
        for i, entry in enumerate(value):
            ok = self.string(entry, item(path, i)) and ok
        return ok

    def listing(self, value: Any, path: str, check: Check, *, what: str) -> bool:
        """A list whose every element passes `check`."""
        if not isinstance(value, list):
            self.add(path, f"must be a list of {what}, not {kind(value)}")
            return False
        for i, entry in enumerate(value):
            check(entry, item(path, i))
        return True
