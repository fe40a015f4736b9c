"""Example inputs: a valid value of each input type (also ones the `if` of a transition wants) and an invalid one."""
from __future__ import annotations

import datetime as _dt
import importlib
import re
from typing import Any

from flows import inputs, patterns
from flows.model import Condition, Input

# The parser Python's `re` uses: private and without stubs, but the very syntax the flow format promises.
_c: Any = importlib.import_module("re._constants")
_sre: Any = importlib.import_module("re._parser")

ATTACHMENT_PAYLOADS: dict[str, dict[str, Any]] = {
    "image": {"url": "https://example.com/photo.jpg"},
    "video": {"url": "https://example.com/clip.mp4"},
    "audio": {"url": "https://example.com/voice.ogg"},
    "file": {"url": "https://example.com/doc.pdf", "filename": "doc.pdf"},
    "sticker": {"code": "smile"},
    "share": {"url": "https://example.com"},
    "contact": {"name": "Anna", "vcf_phone": "+79991234567"},
    "location": {"latitude": 55.7558, "longitude": 37.6173},
}
TEXT_EXAMPLE = {"text": "Anna", "phone": "+79991234567", "email": "anna@example.com", "number": "42",
                "integer": "42", "date": "15.06.2025", "any": "hello"}
INVALID_TEXT = {"phone": "12345", "email": "not an email", "number": "many", "integer": "4.5",
                "date": "31.02.2025", "choice": "none of these"}
_CATEGORY = {"CATEGORY_DIGIT": "7", "CATEGORY_NOT_DIGIT": "a", "CATEGORY_WORD": "a", "CATEGORY_NOT_WORD": " ",
             "CATEGORY_SPACE": " ", "CATEGORY_NOT_SPACE": "a"}


def attachment(kind: str | None, caption: str | None = None) -> dict[str, Any]:
    """An attachment update of a kind (image when any kind will do)."""
    kind = kind or "image"
    update: dict[str, Any] = {"attachment": {"type": kind, "payload": dict(ATTACHMENT_PAYLOADS.get(kind, {}))}}
    if caption:
        update["text"] = caption
    return update


# Nested repeats multiply ((a{200}){200}...): an example longer than any message is no use anyway.
MAX_EXAMPLE = 4000


def _build(items: Any, out: list[str], depth: int = 0) -> None:
    if depth > 50:
        raise ValueError("pattern nested too deeply")
    if len(out) > MAX_EXAMPLE:
        raise ValueError("the shortest example is longer than a message")
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("a" if arg != ord("a") else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_pick_in(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            times = low if low > 0 else (1 if high == _c.MAXREPEAT or high >= 1 else 0)
            for _ in range(min(times, 200)):
                _build(sub, out, depth + 1)
        elif name == "SUBPATTERN":
            _build(arg[-1], out, depth + 1)
        elif name == "ATOMIC_GROUP":
            _build(arg, out, depth + 1)
        elif name == "BRANCH":
            _build(arg[1][0], out, depth + 1)
        elif name == "CATEGORY":
            out.append(_CATEGORY.get(str(arg), "a"))
        elif name == "AT":
            continue
        else:
            raise ValueError(f"no example for {name}")


def _pick_in(items: Any) -> str:
    negate = any(str(op) == "NEGATE" for op, _ in items)
    if negate:
        banned: set[str] = set()
        for op, arg in items:
            if str(op) == "LITERAL":
                banned.add(chr(arg))
        for candidate in "azAZ09 _-.":
            if candidate not in banned:
                return candidate
        return "~"
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            return chr(arg)
        if name == "RANGE":
            return chr(arg[0])
        if name == "CATEGORY":
            return _CATEGORY.get(str(arg), "a")
    return "a"


def pattern_example(pattern: str | None) -> str | None:
    """A short text the pattern finds (searched, not anchored), or None when none is found."""
    if not pattern:
        return "text"
    try:
        out: list[str] = []
        _build(_sre.parse(pattern), out)
        text = "".join(out)
    except (ValueError, TypeError, RecursionError, re.error, OverflowError):
        return None
    for candidate in (text, text.strip(), "text"):
        if candidate.strip() and patterns.search(pattern, candidate):
            return candidate.strip()
    return None


def condition_values(conds: list[Condition]) -> list[Any]:
    """Values that make some (ideally all) of these conditions on one key true or false."""
    out: list[Any] = []
    for c in conds:
        v = c.value
        if c.op in ("eq", "in") or c.op in ("le", "ge"):
            out.extend(v if isinstance(v, list) else [v])
        if c.op in ("ne", "not_in", "matches"):
            out.append(pattern_example(str(v)) if c.op == "matches" else "other")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.extend([v - 1, v + 1])
        elif isinstance(v, str) and inputs.parse_date(v):
            day = _dt.date.fromisoformat(inputs.parse_date(v) or "")
            out.extend([(day - _dt.timedelta(days=1)).isoformat(), (day + _dt.timedelta(days=1)).isoformat()])
        elif isinstance(v, str) and v:
            out.append(v + "x")
    return [v for v in out if v is not None]


def _as_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def valid_inputs(inp: Input, wanted: list[Any]) -> tuple[list[dict[str, Any]], str | None]:
    """Update objects the input accepts (the values the conditions want first); or [] and why none."""
    kind = inp.type
    if kind == "attachment":
        return [attachment(k) for k in (inp.kinds or ("image",))], None
    if kind in ("contact", "location"):
        return [attachment(kind)], None
    texts: list[str] = [_as_text(v) for v in wanted]
    if kind == "choice":
        texts += list(inp.choices)
    elif kind == "regex":
        example = pattern_example(inp.pattern)
        if example is not None:
            texts.append(example)
    elif kind in ("number", "integer"):
        low = inp.min if inp.min is not None else None
        high = inp.max if inp.max is not None else None
        if low is not None:
            texts.append(_as_text(low if kind == "number" else int(-(-low // 1))))
        if high is not None:
            texts.append(_as_text(high if kind == "number" else int(high // 1)))
        if low is None and high is None:
            texts.append("42")
    elif kind == "date":
        texts += [TEXT_EXAMPLE["date"], _dt.date(2025, 6, 15).isoformat()]
    elif kind == "text":
        size = max(inp.min_length or 4, 1)
        if inp.max_length is not None:
            size = min(size, inp.max_length)
        texts.append(("Anna" * (size // 4 + 1))[:size])
    else:
        texts.append(TEXT_EXAMPLE.get(kind, "hello"))
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for text in texts:
        if text in seen:
            continue
        seen.add(text)
        if inputs.check(inp, text).ok:
            found.append({"text": text})
    if not found:
        if kind == "regex":
            return [], f"no text was found that the pattern {inp.pattern!r} matches"
        return [], f"no {kind} value satisfies the input's limits"
    return found, None


def invalid_input(inp: Input) -> dict[str, Any] | None:
    """An update object the input refuses, or None when every message is valid (type `any`)."""
    kind = inp.type
    candidates: list[dict[str, Any]] = []
    if kind in ("attachment", "contact", "location"):
        candidates.append({"text": "hello"})
        if inp.kinds:
            others = [k for k in ATTACHMENT_PAYLOADS if k not in inp.kinds]
            candidates += [attachment(k) for k in others[:1]]
    elif kind == "any":
        return None
    else:
        if kind in INVALID_TEXT:
            candidates.append({"text": INVALID_TEXT[kind]})
        if kind == "text" and inp.max_length is not None:
            candidates.append({"text": "x" * (inp.max_length + 1)})
        if kind == "text" and (inp.min_length or 0) > 1:
            candidates.append({"text": "x"})
        if kind in ("number", "integer"):
            if inp.min is not None:
                candidates.append({"text": _as_text(int(inp.min) - 1)})
            if inp.max is not None:
                candidates.append({"text": _as_text(int(inp.max) + 1)})
        if kind == "regex":
            candidates.append({"text": "\u2400"})
        candidates.append(attachment("image"))
    for update in candidates:
        text = update.get("text")
        atts = [update["attachment"]] if "attachment" in update else []
        if not inputs.check(inp, text, atts).ok:
            return update
    return None
