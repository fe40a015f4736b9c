"""Shapes whose keys the author chooses: `set` assignments (data keys) and texts per language (codes)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from flows.checks import Report, join, kind, shown_key
from flows.shapes import Add, Node, data_ok, extension


class Assignments(Node):
    """`set`: data keys (`key`) to text templates; `x-` keys are the author's own."""

    def __init__(self, key: Node, message: str) -> None:
        self.key, self.message = key, message

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not dict:
            return False
        for key, template in value.items():
            if type(key) is str and key.startswith("x-"):
                if not data_ok(template, add, depth + 1):
                    return False
                add(key)
            elif not self.key.ok(key, add, depth + 1) or type(template) is not str:
                return False
            else:
                add(template)
        return True

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, dict):
            report.add(path, self.message.format(kind=kind(value)))
            return
        for key, template in value.items():
            if extension(key):
                continue
            where = join(path, key)
            if isinstance(key, str):
                before = len(report.details)
                self.key.check(key, where, report, depth + 1)
                if len(report.details) > before:
                    continue
            if not isinstance(template, str):
                report.add(where, f"set values are text templates and must be strings, not {kind(template)};"
                                  f' quote it (e.g. "18")')


def owners(field: str, table: Mapping[str, Iterable[str]], noun: str) -> str:
    """'; "min" belongs to number and integer inputs only' when `field` is another variant's option."""
    found = [name for name, options in table.items() if field in options]
    return f'; "{field}" belongs to {" and ".join(found)} {noun}s only' if found else ""


class Translated(Node):
    """A string (the default language's), or an object of `inner` values keyed by language code."""

    # Which codes a flow lists is a rule across fields (`flows.languages.language_problems`); here only
    # the shape of a code. `x-` keys are the author's own, as anywhere.

    def __init__(self, inner: Node, code: re.Pattern[str], plain: Callable[[Any], bool], what: str) -> None:
        self.inner, self.code, self.plain, self.what = inner, code.fullmatch, plain, what

    def ok(self, value: Any, add: Add, depth: int) -> bool:
        if type(value) is not dict:
            return self.plain(value) and self.inner.ok(value, add, depth)
        if not value:
            return False
        below, code, inner = depth + 1, self.code, self.inner
        for key, sub in value.items():
            if type(key) is not str:
                return False
            if key.startswith("x-"):
                if not data_ok(sub, add, below):
                    return False
            elif code(key) is None or not inner.ok(sub, add, below):
                return False
            add(key)
        return True

    def check(self, value: Any, path: str, report: Report, depth: int) -> None:
        if not isinstance(value, dict):
            if self.plain(value):
                self.inner.check(value, path, report, depth)
            else:
                report.add(path, f"must be {self.what}, or an object of them by language like"
                                 f' {{"ru": ..., "en": ...}}, not {kind(value)}')
            return
        if not value:
            report.add(path, 'a text in several languages needs at least one, e.g. {"ru": "..."}; or write it as a'
                             " plain string")
            return
        for key, sub in value.items():
            if extension(key):
                continue
            where = join(path, key)
            if not isinstance(key, str) or self.code(key) is None:
                shown = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else shown_key(key)
                report.add(where, f"{shown} is not a language code; use 2-3 lowercase Latin letters (ru, en, tt)")
                continue
            self.inner.check(sub, where, report, depth + 1)
