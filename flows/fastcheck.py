"""A quick yes/no on whether a raw document has no format problem at all, for the common, valid case.

`well_formed(doc)` is True only when `flows.schema.format_problems(doc)` reports nothing: both read
the one declaration in `flows.format`, this one without building a path or a message per field.
Anything unusual (a subclass of a JSON type, an exception) answers False, and the caller then runs
the detailed check, which stays the one source of the problem details.
"""
from __future__ import annotations

from typing import Any

from flows.format import DOCUMENT, ELEMENTS


def utf8_ok(text: str) -> bool:
    """Whether the text holds no lone surrogate."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def well_formed(doc: Any) -> bool:
    """True only when the detailed check would find no problem in `doc` (False may still be fine)."""
    texts: list[str] = []
    try:
        return DOCUMENT.ok(doc, texts.append, 1) and utf8_ok("".join(texts))
    except Exception:  # noqa: BLE001 - whatever went wrong, the detailed check has the final word
        return False


def fine_elements(doc: Any) -> set[int]:
    """The ids of the states and transitions of `doc` in which the detailed check finds nothing."""
    fine: set[int] = set()
    if type(doc) is not dict:
        return fine
    for field, node in ELEMENTS:
        entries = doc.get(field)
        if type(entries) is not list:
            continue
        for entry in entries:
            texts: list[str] = []
            try:
                if node.ok(entry, texts.append, 3) and utf8_ok("".join(texts)):
                    fine.add(id(entry))
            except Exception:  # noqa: BLE001 - the detailed check looks at this one
                continue
    return fine
