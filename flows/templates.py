"""Message templates: `{key}` placeholders, `{{`/`}}` literal braces, splitting of long texts."""
from __future__ import annotations

import json
from decimal import Decimal
from functools import lru_cache
from typing import Any, Mapping

from flows.format import PLACEHOLDER
from flows.limits import RENDER_LIMIT
from flows.markup import ESCAPES
from flows.model import MESSAGE_LIMIT


# A compiled template is the text itself when it has no placeholder, else a tuple alternating
# literal text and keys: (literal, key, literal, key, ..., literal).
Compiled = str | tuple[str, ...]


@lru_cache(maxsize=8192)
def compile_template(text: str) -> Compiled:
    """Parse a template once; static texts come back as plain strings."""
    if "{" not in text and "}" not in text:
        return text
    parts: list[str] = []
    literal: list[str] = []
    pos = 0
    for m in PLACEHOLDER.finditer(text):
        literal.append(text[pos:m.start()])
        key = m.group(1)
        if key is None:
            literal.append(m.group(0)[0])
        else:
            parts.append("".join(literal))
            parts.append(key)
            literal = []
        pos = m.end()
    literal.append(text[pos:])
    if not parts:
        return "".join(literal)
    parts.append("".join(literal))
    return tuple(parts)


def value_text(value: Any) -> str:
    """How one data value reads inside a text: numbers without `.0`, JSON for objects, null as ""."""
    if value is None:
        return ""
    kind = value.__class__
    if kind is str:
        text: str = value
        return text
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        if value.is_integer():
            return str(int(value))
        written = repr(value)
        # Positional, as the user typed it: 0,00001 reads back as 0.00001, not 1e-05.
        return format(Decimal(written), "f") if "e" in written and value == value else written
    if isinstance(value, (dict, list, tuple)):
        try:
            return json.dumps(value, ensure_ascii=False)
        except (RecursionError, ValueError):  # nested too deeply to write; it is refused as data anyway
            return ""
    return str(value)


def render_compiled(compiled: Compiled, data: Mapping[str, Any]) -> str:
    """Fill a compiled template from data."""
    if compiled.__class__ is str:
        return compiled
    out = [compiled[0]]
    get = data.get
    for i in range(1, len(compiled), 2):
        out.append(value_text(get(compiled[i])))
        out.append(compiled[i + 1])
    return "".join(out)


# Templates with at most this many parts (3 placeholders) are rendered whole.
_FEW = 7


def render_capped(compiled: Compiled, data: Mapping[str, Any], limit: int) -> str:
    """Fill a compiled template, stopping once the text is longer than `limit` (the rest would be dropped)."""
    if compiled.__class__ is str or len(compiled) <= _FEW:
        # A few placeholders render a bounded text: the data they read is bounded.
        return render_compiled(compiled, data)
    out = [compiled[0]]
    size = len(compiled[0])
    get = data.get
    for i in range(1, len(compiled), 2):
        value = value_text(get(compiled[i]))
        out.append(value)
        out.append(compiled[i + 1])
        size += len(value) + len(compiled[i + 1])
        if size > limit:
            return "".join(out)[:limit + 1]
    return "".join(out)


def render_escaped(compiled: Compiled, data: Mapping[str, Any], fmt: str) -> str:
    """Fill a compiled template for a text in MAX markup `fmt`: each inserted value shows literally."""
    if compiled.__class__ is str:
        return compiled
    escape = ESCAPES[fmt]
    out = [compiled[0]]
    size = len(compiled[0])
    get = data.get
    for i in range(1, len(compiled), 2):
        value = escape(value_text(get(compiled[i])))
        out.append(value)
        out.append(compiled[i + 1])
        size += len(value) + len(compiled[i + 1])
        if size > RENDER_LIMIT:  # the rest would be dropped anyway
            return "".join(out)[:RENDER_LIMIT + 1]
    return "".join(out)


def render(text: str, data: Mapping[str, Any]) -> str:
    """Render a template against data; missing keys and null render as ""."""
    return render_compiled(compile_template(text), data)


def placeholders(text: str) -> list[str]:
    """The data keys a template reads, in order of appearance."""
    compiled = compile_template(text)
    if compiled.__class__ is str:
        return []
    return list(compiled[1::2])


def split_text(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Pack a long text into parts of at most `limit` characters, line by line (a longer line is cut)."""
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    current: str | None = None
    for line in text.split("\n"):
        while len(line) > limit:
            if current is not None:
                parts.append(current)
                current = None
            parts.append(line[:limit])
            line = line[limit:]
        if current is None:
            current = line
        elif len(current) + 1 + len(line) <= limit:
            current = current + "\n" + line
        else:
            parts.append(current)
            current = line
    if current is not None:
        parts.append(current)
    # A part made only of the line break between two parts carries nothing worth sending.
    kept = [p for p in parts if p]
    return kept or [text[:limit]]
