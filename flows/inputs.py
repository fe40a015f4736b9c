"""Input types: checking what the user sent and normalising the value that gets saved."""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Callable

from flows.limits import MAX_NUMBER_TEXT
from flows.model import Input
from flows.patterns import search
from flows.templates import value_text

# ASCII digits only: "٣" is a digit to Python's \d but not a digit of a phone number.
PHONE_RE = re.compile(r"\+?[78][0-9]{10}")
# Spaces, dashes (ASCII and typographic) and brackets people put into phone numbers.
PHONE_NOISE = re.compile(r"[\s\-\u2010-\u2015()\[\]]")
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
# What the `number` input accepts; the same syntax decides whether a value "parses as a number" in conditions.
NUMBER_RE = re.compile(r"[+-]?[0-9]+(?:[.,][0-9]+)?")
INTEGER_RE = re.compile(r"[+-]?[0-9]+")
DATE_DMY = re.compile(r"([0-9]{2})\.([0-9]{2})\.([0-9]{4})")
DATE_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
TEXT_TYPES = frozenset({"text", "phone", "email", "number", "integer", "choice", "regex", "date"})


class Verdict:
    """The outcome of checking one input: `ok`, the value to save, and why (a phrase)."""

    __slots__ = ("ok", "value", "why")

    def __init__(self, ok: bool, value: Any, why: str) -> None:
        self.ok = ok
        self.value = value
        self.why = why

    def __repr__(self) -> str:
        return f"Verdict(ok={self.ok!r}, value={self.value!r}, why={self.why!r})"


def _bad(why: str) -> Verdict:
    return Verdict(False, None, why)


def _text(inp: Input, text: str) -> Verdict:
    n = len(text)
    if inp.min_length is not None and n < inp.min_length:
        return _bad(f"is shorter than {inp.min_length} characters")
    if inp.max_length is not None and n > inp.max_length:
        return _bad(f"is longer than {inp.max_length} characters")
    return Verdict(True, text, "is a valid text")


def normalise_phone(text: str) -> str | None:
    """`+7` and the last ten digits, or None when the text is not a phone number."""
    bare = PHONE_NOISE.sub("", text)
    if PHONE_RE.fullmatch(bare) is None:
        return None
    return "+7" + bare[-10:]


def _phone(inp: Input, text: str) -> Verdict:
    # Most numbers arrive bare; stripping punctuation only when needed keeps the common case fast.
    if PHONE_RE.fullmatch(text) is None:
        text = PHONE_NOISE.sub("", text)
        if PHONE_RE.fullmatch(text) is None:
            return _bad("is not a valid phone")
    return Verdict(True, "+7" + text[-10:], "is a valid phone")


def _email(inp: Input, text: str) -> Verdict:
    if EMAIL_RE.fullmatch(text) is None:
        return _bad("is not a valid email")
    return Verdict(True, text, "is a valid email")


def _bounds(inp: Input, value: int | float, kind: str) -> Verdict:
    if inp.min is not None and value < inp.min:
        return _bad(f"is below the minimum {value_text(inp.min)}")
    if inp.max is not None and value > inp.max:
        return _bad(f"is above the maximum {value_text(inp.max)}")
    return Verdict(True, value, f"is a valid {kind}")


def parse_number(text: str) -> int | float | None:
    """A decimal number with `.` or `,`; whole numbers come back as int."""
    if len(text) > MAX_NUMBER_TEXT or NUMBER_RE.fullmatch(text) is None:
        return None
    whole, _, fraction = text.replace(",", ".").partition(".")
    # Decided on the digits, not the float: 12345678901234567.5 must not become a (different) integer.
    if not fraction.strip("0"):
        return int(whole)
    return float(text.replace(",", "."))


def _number(inp: Input, text: str) -> Verdict:
    value = parse_number(text)
    if value is None:
        return _bad("is not a number")
    return _bounds(inp, value, "number")


def _integer(inp: Input, text: str) -> Verdict:
    if len(text) > MAX_NUMBER_TEXT or INTEGER_RE.fullmatch(text) is None:
        return _bad("is not a whole number")
    return _bounds(inp, int(text), "integer")


def _choice(inp: Input, text: str) -> Verdict:
    wanted = text.lower()
    for index, choice in enumerate(inp.choices):
        if choice.strip().lower() == wanted:
            # In another language the default language's entry at the same position is saved.
            saved = inp.choice_values[index] if inp.choice_values else choice
            return Verdict(True, saved, "is one of the choices")
    return _bad("is not one of the choices")


def _regex(inp: Input, text: str) -> Verdict:
    if not search(inp.pattern or "", text):
        return _bad("does not match the pattern")
    return Verdict(True, text, "matches the pattern")


def parse_date(text: str) -> str | None:
    """ISO `YYYY-MM-DD` for `DD.MM.YYYY` or `YYYY-MM-DD` naming a real day, else None."""
    m = DATE_DMY.fullmatch(text)
    if m is not None:
        day, month, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        m = DATE_ISO.fullmatch(text)
        if m is None:
            return None
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        return _dt.date(year, month, day).isoformat()
    except ValueError:
        return None


def _date(inp: Input, text: str) -> Verdict:
    iso = parse_date(text)
    if iso is None:
        return _bad("is not a real date (DD.MM.YYYY or YYYY-MM-DD)")
    return Verdict(True, iso, "is a valid date")


_TEXT_CHECKS: dict[str, Callable[[Input, str], Verdict]] = {
    "text": _text, "phone": _phone, "email": _email, "number": _number, "integer": _integer,
    "choice": _choice, "regex": _regex, "date": _date,
}


def _first_of(attachments: list[dict[str, Any]], kinds: tuple[str, ...] | frozenset[str]) -> dict[str, Any] | None:
    for att in attachments:
        if not kinds or att.get("type") in kinds:
            return att
    return None


def check(inp: Input, text: str | None, attachments: list[dict[str, Any]] | None = None) -> Verdict:
    """Check one message (text or caption plus attachments) against a state's input."""
    kind = inp.type
    attachments = attachments or []
    trimmed = text.strip() if text else ""
    if kind in _TEXT_CHECKS:
        if not trimmed:
            return _bad("has no text" if attachments else "is empty")
        return _TEXT_CHECKS[kind](inp, trimmed)
    if kind == "any":
        if trimmed:
            return Verdict(True, trimmed, "is accepted (any)")
        if attachments:
            return Verdict(True, attachments[0], "is accepted (any)")
        return _bad("is empty")
    if kind == "attachment":
        att = _first_of(attachments, inp.kinds)
        if att is None:
            wanted = ", ".join(inp.kinds) if inp.kinds else "any kind"
            return _bad(f"has no attachment of {wanted}")
        return Verdict(True, att, f"is a valid {att.get('type', 'attachment')} attachment")
    if kind in ("contact", "location"):
        att = _first_of(attachments, (kind,))
        if att is None:
            return _bad(f"has no {kind}")
        return Verdict(True, att, f"is a valid {kind}")
    return _bad(f"cannot be checked as {kind!r}")


def shown(text: str | None, attachments: list[dict[str, Any]] | None) -> str:
    """How an input is quoted in reasons: its trimmed text, else its attachment kinds."""
    if text and text.strip():
        value = text.strip()
        return value if len(value) <= 80 else value[:77] + "..."
    if attachments:
        return "[" + ", ".join(str(a.get("type", "?")) for a in attachments) + "]"
    return ""
