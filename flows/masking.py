"""Masking personal data in transcripts: which values of a turn are hidden, and how each is shown.

The rule, applied to a timeline record before it is stored:
- an email reads `i***@example.com` (the first character of the name, then the domain);
- a phone number keeps its `+`, separators and last two digits, every other digit a `*`:
  `+7 916 123-45-67` reads `+* *** ***-**-67`;
- anything else (a contact card, a name, a number, an object) reads `•••`.
Masked are the data values of the chosen keys and of every key a masked input type saves to, the user's
text answering a state whose input is masked (valid or not), and every occurrence of those values in
the record's other texts (replies that interpolate them, reasons that quote them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from flows.model import Flow
from flows.templates import value_text

MASK = "•••"
INPUT_TYPES = ("phone", "email", "contact")
EMAIL = re.compile(r"^([^@\s])[^@\s]*@([^@\s]+)$")
# Digits with the separators people type into phone numbers; 7-15 digits (E.164 has at most 15).
PHONE = re.compile(r"^\+?[0-9\s()\-‐-―]+$")
DIGIT = re.compile(r"[0-9]")


def mask_text(text: str, kind: str | None = None) -> str:
    """One value as the transcript shows it; `kind` is the input type it answered, if known."""
    text = text.strip()
    if not text:
        return text
    email = EMAIL.match(text)
    if email and kind in (None, "email"):
        return f"{email.group(1)}***@{email.group(2)}"
    if kind in (None, "phone") and PHONE.match(text) and 7 <= len(DIGIT.findall(text)) <= 15:
        cut, kept = len(text), 0
        while kept < 2:  # the last two digits stay; a phone has at least seven
            cut -= 1
            kept += text[cut] in "0123456789"
        return DIGIT.sub("*", text[:cut]) + text[cut:]
    return MASK


class Memo(dict):  # type: ignore[type-arg]
    """`mask_text` answers within one record: a turn shows the same value in several places."""

    def text(self, value: str) -> str:
        found = self.get(value)
        if found is None:
            found = self[value] = mask_text(value)
        return found


def mask_value(value: Any, memo: Memo | None = None) -> Any:
    """A data value masked: strings by `mask_text`, anything else (objects, numbers) as `•••`."""
    if value is None:
        return None
    if not isinstance(value, str):
        return MASK
    return memo.text(value) if memo is not None else mask_text(value)


def leaves(value: Any, nested: bool = False) -> Iterable[str]:
    """The texts a value can appear as inside a message: itself as rendered and its string parts.

    Inside objects only strings of three characters or more count: a contact's `1` must not mask every 1.
    """
    if value is None:
        return
    if isinstance(value, dict):
        items: Iterable[Any] = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        rendered = value_text(value)
        if rendered and (not nested or (isinstance(value, str) and len(value) >= 3)):
            yield rendered
        return
    if not nested:
        yield value_text(value)
    for item in items:
        yield from leaves(item, True)


@dataclass(frozen=True, slots=True)
class Masking:
    """A bot's masking settings: data keys and input types whose values never reach a transcript."""

    keys: frozenset[str] = frozenset()
    inputs: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.keys or self.inputs)

    def masked_keys(self, flow: Flow | None) -> frozenset[str]:
        """The chosen keys plus those the flow's masked inputs save to."""
        if flow is None or not self.inputs:
            return self.keys
        saved = {s.input.save_as for s in flow.states
                 if s.input is not None and s.input.save_as and s.input.type in self.inputs}
        return self.keys | frozenset(saved)

    def input_kind(self, flow: Flow | None, state_id: str | None) -> str | None:
        """The input type whose answer is masked when the user writes in `state_id`; None: not masked."""
        if flow is None or state_id is None:
            return None
        state = flow.state(state_id)
        if state is None or state.input is None:
            return None
        if state.input.type in self.inputs:
            return state.input.type
        if state.input.save_as and state.input.save_as in self.keys:
            return state.input.type
        return None

    def data(self, data: dict[str, Any] | None, keys: frozenset[str],
             memo: Memo | None = None) -> dict[str, Any] | None:
        """A dialog's data with the values of `keys` masked."""
        if not data or not keys & data.keys():
            return data
        return {k: mask_value(v, memo) if k in keys else v for k, v in data.items()}


def replacer(secrets: Iterable[tuple[str, str]]) -> Any:
    """A function masking every occurrence of the given (value, shown as) pairs in a text, longest first."""
    pairs = sorted({(raw, shown) for raw, shown in secrets if raw and raw != shown}, key=lambda p: -len(p[0]))

    def replace(text: Any) -> Any:
        if not isinstance(text, str) or not text:
            return text
        for raw, shown in pairs:  # a few values per dialog: plain scans beat compiling a pattern per turn
            if raw in text:
                text = text.replace(raw, shown)
        return text

    return replace


def secrets_of(data: dict[str, Any] | None, keys: frozenset[str],
               memo: Memo | None = None) -> list[tuple[str, str]]:
    """(text, masked text) for every way the masked values of `data` can appear in a message."""
    found: list[tuple[str, str]] = []
    memo = memo if memo is not None else Memo()
    for key in keys & (data or {}).keys():
        value = data[key]  # type: ignore[index]
        for text in leaves(value):
            found.append((text, memo.text(text) if isinstance(value, str) else MASK))
    return found
