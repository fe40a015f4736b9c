"""The kinds of value a document declaration is made of; each answers both checks from one definition.

Every node has `ok(value, add, depth)`, the quick yes/no for the usual, valid document, and
`check(value, path, report, depth)`, which names every problem with its path. `add` collects the
strings the quick check accepted (their UTF-8 check runs once, on all of them joined); `depth` is the
nesting level of `value` (the document itself is level 1). Anything unusual in the quick check
(a subclass of a JSON type) answers False, and the detailed check has the final word.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from flows.checks import (
    Report, is_int, is_number, item, join, kind, quoted, show_number, shown_key, suggestion, too_large,
)
from flows.limits import MAX_DEPTH, MAX_NUMBER
from flows.patterns import pattern_problem
from flows.said import Said

Add = Callable[[str], None]
# A rule across fields: the problems of an object, as (keys below it, message); no keys means the
# object itself. A rule looks only at fields that pass their own checks.
Rule = Callable[[dict[str, Any]], Sequence[tuple[tuple[str | int, ...], str]]]
_isfinite = math.isfinite


def _ignore(text: str) -> None:
    """An `add` for checks whose strings need no UTF-8 check."""


class Node:
    """One kind of value."""

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        raise NotImplementedError

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        raise NotImplementedError


def number_ok(value: Any) -> bool:
    """An int or a finite float, never a boolean, at most 2^53 in magnitude."""
    kind_ = type(value)
    if kind_ is int:
        whole: int = value
        return -MAX_NUMBER <= whole <= MAX_NUMBER
    if kind_ is not float:
        return False
    real: float = value
    return _isfinite(real) and -MAX_NUMBER <= real <= MAX_NUMBER


def scalar_ok(value: Any, add: Add) -> bool:
    """A single JSON value: null, a boolean, a number within bounds or a string."""
    kind_ = type(value)
    if kind_ is str:
        add(value)
        return True
    return value is None or kind_ is bool or number_ok(value)


def data_ok(value: Any, add: Add, depth: int) -> bool:
    """Anything JSON can hold, numbers within bounds, containers at most MAX_DEPTH levels deep."""
    stack = [(value, depth)]
    while stack:
        value, depth = stack.pop()
        kind_ = type(value)
        if kind_ is dict or kind_ is list:
            if depth > MAX_DEPTH:
                return False
            if kind_ is dict:
                for key in value:
                    if type(key) is not str:
                        return False
                    add(key)
                stack.extend([(sub, depth + 1) for sub in value.values()])
            else:
                stack.extend([(sub, depth + 1) for sub in value])
        elif not scalar_ok(value, add):
            return False
    return True


class Text(Node):
    """A string; with `nonempty`, not blank."""

    def __init__(self, nonempty: bool = False) -> None:
        self.nonempty = nonempty

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not str or (self.nonempty and not value.strip()):
            return False
        add(value)
        return True

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, str):
            report.add(path, f"must be a string, not {kind(value)}")
        elif self.nonempty and not value.strip():
            report.add(path, "must not be empty")


class Number(Node):
    """A number (a whole one with `whole`) from `minimum` to `maximum`."""

    def __init__(self, minimum: float | None = None, maximum: float = MAX_NUMBER, *, whole: bool = False,
                 unit: str = "") -> None:
        self.minimum, self.maximum, self.whole, self.unit = minimum, maximum, whole, unit

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not int and (self.whole or type(value) is not float or not _isfinite(value)):
            return False
        low = self.minimum if self.minimum is not None else -MAX_NUMBER
        return low <= value <= self.maximum

    def fine(self, value: Any) -> bool:
        """Whether `value` passes (for rules that compare fields)."""
        return self.ok(value, _ignore, 0)

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if self.whole and not is_int(value):
            report.add(path, f"must be a whole number (at least {self.minimum:g}), not {kind(value)}")
        elif not is_number(value):
            hint = "; write it without quotes" if isinstance(value, str) else ""
            report.add(path, f"must be a number, not {kind(value)}{hint}")
        elif self.minimum is not None and value < self.minimum:
            report.add(path, f"must be at least {self.minimum:g}, not {show_number(value)}")
        elif value < -MAX_NUMBER or value > self.maximum:
            report.add(path, number_bound(value, self.maximum, self.unit))


def number_bound(value: Any, maximum: float, unit: str = "") -> str:
    """The sentence for a number past its upper bound (or past 2^53 below zero)."""
    if maximum >= MAX_NUMBER or value < 0:
        return too_large(value)
    text = f"must be at most {maximum:,.0f}{unit}, not {show_number(value)}; write a smaller number"
    return Said(text, "number_above_maximum", maximum=maximum, unit=unit.strip(), value=show_number(value))


class Flag(Node):
    """true or false."""

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        return type(value) is bool

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, bool):
            report.add(path, f"must be true or false, not {kind(value)}")


class Word(Node):
    """One of a fixed set of words."""

    def __init__(self, words: Iterable[str], what: str) -> None:
        self.words = tuple(words)
        self.set = frozenset(self.words)
        self.what = what

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        return type(value) is str and value in self.set

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not (isinstance(value, str) and value in self.set):
            shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else kind(value)
            report.add(path, f"unknown {self.what} {shown}; expected one of {quoted(self.words)}"
                             f"{suggestion(value, self.words)}")


class Shaped(Node):
    """A string whose whole text matches `regex`."""

    # `problem` phrases the refusal of a string; `other`, when given, that of a value of another type.

    def __init__(self, regex: re.Pattern[str], problem: Callable[[str], str],
                 other: Callable[[Any], str] | None = None) -> None:
        self.match = regex.fullmatch
        self.problem = problem
        self.other = other

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not str or self.match(value) is None:
            return False
        add(value)
        return True

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, str):
            report.add(path, self.other(value) if self.other else f"must be a string, not {kind(value)}")
        elif self.match(value) is None:
            report.add(path, self.problem(value))


def _close(word: Any, choices: Iterable[str]) -> str:
    """The allowed name closest to a mistyped one, or ''."""
    hint = suggestion(word, choices)
    return hint[len('; did you mean "'):-len('"?')] if hint else ""


class PatternText(Node):
    """A document pattern: Python `re` syntax without backreferences and lookaround."""

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not str or pattern_problem(value) is not None:
            return False
        add(value)
        return True

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, str):
            report.add(path, f"must be a string, not {kind(value)}")
            return
        problem = pattern_problem(value)
        if problem:
            report.add(path, f"the regular expression {problem}; fix the pattern"
                             " (Python syntax without backreferences or lookaround, e.g. ^\\d{5}$)")


class Literal(Node):
    """A single JSON value, not a list or an object."""

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        return scalar_ok(value, add)

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if isinstance(value, (dict, list)):
            report.add(path, f"must be a single value (a string, number, true/false or null), not {kind(value)}")


class Free(Node):
    """An object of free JSON data (editor positions); `message` names the shape when it is not one."""

    def __init__(self, message: str) -> None:
        self.message = message

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        return type(value) is dict and data_ok(value, add, depth)

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, dict):
            report.add(path, self.message.format(kind=kind(value)))


class ListOf(Node):
    """A list whose every element is `entry`."""

    # `what` names the elements ("states"); `empty` is the problem of an empty list (None: allowed);
    # `message` replaces the sentence for a value that is not a list (`{kind}` is filled in); with
    # `settled`, elements the report marks as fine are not checked again.

    def __init__(self, entry: Node, what: str, *, empty: str | None = None, message: str | None = None,
                 settled: bool = False) -> None:
        self.entry, self.what, self.empty, self.message, self.settled = entry, what, empty, message, settled

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not list or (self.empty is not None and not value):
            return False
        entry, below = self.entry, depth + 1
        for element in value:
            if not entry.ok(element, add, below):
                return False
        return True

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, list):
            message = self.message or f"must be a list of {self.what}, not {{kind}}"
            report.add(path, message.format(kind=kind(value)))
            return
        if self.empty is not None and not value:
            report.add(path, self.empty)
            return
        fine = report.fine if self.settled else ()
        for i, element in enumerate(value):
            if id(element) not in fine:
                self.entry.check(element, item(path, i), report, depth + 1)


class Optional(Node):
    """`null`, or `inner`."""

    def __init__(self, inner: Node) -> None:
        self.inner = inner

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        return value is None or self.inner.ok(value, add, depth)

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if value is not None:
            self.inner.check(value, path, report, depth)


# Markers in `Obj.nodes`, compared by identity and never called.
_TEXT = Node()
_UNKNOWN = Node()


def extension(key: Any) -> bool:
    """Keys starting with `x-` hold the author's own data, allowed anywhere."""
    return isinstance(key, str) and key.startswith("x-")


class Obj(Node):
    """An object with known fields (`None`: allowed, not checked), required fields and cross-field rules."""

    # `required` maps each required field to its own sentence, or None for "<what> needs the field".
    # `foreign` explains an unknown field that belongs elsewhere. `message` replaces the sentence for a
    # value that is not an object (`{kind}` is filled in).

    def __init__(self, what: str, fields: Mapping[str, Node | None], *,
                 required: Mapping[str, str | None] | Iterable[str] = (), rules: Iterable[Rule] = (),
                 foreign: Callable[[str], str] | None = None, message: str | None = None) -> None:
        self.what = what
        self.fields = dict(fields)
        self.keys = frozenset(self.fields)
        self.required = dict(required) if isinstance(required, Mapping) else dict.fromkeys(required)
        self.rules = tuple(rules)
        self.foreign = foreign
        self.message = message
        # For the quick check: plain-string fields marked, required fields as a tuple.
        self.nodes = {key: _TEXT if type(node) is Text and not node.nonempty else node
                      for key, node in self.fields.items()}
        self.needed = tuple(self.required)

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not dict:
            return False
        nodes, below = self.nodes, depth + 1
        for key, sub in value.items():
            node = nodes.get(key, _UNKNOWN)
            if node is _TEXT:  # most fields are plain strings: checked here, without a call
                if type(sub) is not str:
                    return False
                add(sub)
            elif node is _UNKNOWN:
                if type(key) is not str or not key.startswith("x-") or not data_ok(sub, add, below):
                    return False
                add(key)
            elif node is not None and not node.ok(sub, add, below):
                return False
        for key in self.needed:
            if key not in value:
                return False
        for rule in self.rules:
            if rule(value):
                return False
        return True

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, dict):
            report.add(path, (self.message or f"{self.what} must be an object, not {{kind}}").format(kind=kind(value)))
            return
        for key, sub in value.items():
            if extension(key):
                continue  # extension data: its JSON-ness and depth are checked over the whole document
            where = join(path, key)
            if key in self.fields:
                node = self.fields[key]
                if node is not None:
                    node.check(sub, where, report, depth + 1)
                continue
            foreign = self.foreign(key) if self.foreign and isinstance(key, str) else ""
            close = "" if foreign else suggestion(key, self.fields)
            shown = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else shown_key(key)
            text = (f"unknown field {shown} in {self.what}{foreign or close}. Allowed here: {quoted(self.fields)};"
                    ' remove it, or prefix it with "x-" to keep your own data')
            # A hint of where the field belongs is English only: such a detail keeps no code.
            named = key if isinstance(key, str) else shown
            report.add(where, text if foreign else Said(text, "unknown_field", field=named, allowed=list(self.fields),
                                                        close=_close(key, self.fields)))
        for key, sentence in self.required.items():
            if key not in value:
                report.add(join(path, key), sentence or Said(f'{self.what} needs the field "{key}"', "missing_field",
                                                             field=key))
        for rule in self.rules:  # each rule looks only at fields that are already fine
            for keys, sentence in rule(value):
                where = path
                for key in keys:
                    where = join(where, key)
                report.add(where, sentence)


class Switch(Node):
    """An object whose field `key` picks its shape among `variants`."""

    # `base` checks the object when the key is missing or unknown, so its other fields are still looked at.

    def __init__(self, key: str, variants: Mapping[str, Obj], base: Obj, what: str, missing: str) -> None:
        self.key, self.variants, self.base, self.what, self.missing = key, dict(variants), base, what, missing
        self.word = Word(self.variants, what)

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not dict:
            return False
        chosen = value.get(self.key)
        variant = self.variants.get(chosen) if type(chosen) is str else None
        return variant is not None and variant.ok(value, add, depth)

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if isinstance(value, dict):
            if self.key not in value:
                report.add(join(path, self.key), self.missing)
            else:
                chosen = value[self.key]
                if isinstance(chosen, str) and chosen in self.variants:
                    self.variants[chosen].check(value, path, report, depth)
                    return
                self.word.check(chosen, join(path, self.key), report, depth + 1)
        self.base.check(value, path, report, depth)
