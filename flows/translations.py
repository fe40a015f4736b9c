"""Editing a document's translations: one language's view of it, putting edits back, the table's cells.

The designer's forms edit one language at a time as plain strings; `flat` gives them the document so,
and `restore` puts an edited flat document back over the original without losing the other languages.
"""
from __future__ import annotations

import copy
from typing import Any

from flows.languages import listed, path_text, pick, slots

Keys = tuple[str | int, ...]


def _get(doc: Any, keys: Keys) -> Any:
    for key in keys:
        doc = doc[key]
    return doc


def _set(doc: Any, keys: Keys, value: Any) -> None:
    _get(doc, keys[:-1])[keys[-1]] = value


def _choices_in(value: Any, code: str, default: str) -> list[str]:
    if isinstance(value, list):
        return list(value) if code == default else []
    own = value.get(code)
    return list(own) if isinstance(own, list) else []


def text_in(value: Any, code: str, default: str) -> str:
    """The text written in language `code` (a plain string is the default's); "" when there is none."""
    if isinstance(value, str):
        return value if code == default else ""
    own = value.get(code)
    return own if isinstance(own, str) else ""


def flat(document: dict[str, Any], code: str | None = None) -> dict[str, Any]:
    """A copy whose every text is the string of language `code` (default: the default's, with fallback)."""
    codes = listed(document)
    if not codes:
        return document
    default = codes[0]
    out = copy.deepcopy(document)
    for keys, value, what in list(slots(out)):
        if what == "choices":
            if isinstance(value, dict):
                own = _choices_in(value, code or default, default)
                _set(out, keys, own or _choices_in(value, default, default))
        elif isinstance(value, dict):
            _set(out, keys, pick(value, code or default, default) if code in (None, default)
                 else text_in(value, code, default))
    return out


def _element(keys: Keys) -> Keys:
    """The state (or settings, or commands) a text belongs to."""
    return keys[:2] if keys[0] == "states" else keys[:1]


def restore(original: dict[str, Any], edited: dict[str, Any]) -> dict[str, Any]:
    """`edited` (a flat, default-language edit of `original`) with the other languages' texts kept.

    A text keeps its translations when its default text is unchanged (found at its place, or moved within
    its state, as when a message above it is removed); a text edited in place keeps them too (the
    translator sees the changed source). Languages no longer listed are dropped from every text.
    """
    old_codes, new_codes = listed(original), listed(edited)
    if not old_codes or not new_codes:
        return edited  # without languages every text is its default string
    default = old_codes[0]
    before: dict[Keys, Any] = {keys: value for keys, value, _ in slots(original)}
    by_text: dict[tuple[Keys, str, str], list[Any]] = {}
    for keys, value, what in slots(original):
        if isinstance(value, dict):
            own = value.get(default)
            marker = repr(own) if what == "choices" else own
            if isinstance(marker, str):
                by_text.setdefault((_element(keys), what, marker), []).append(value)
    out = copy.deepcopy(edited)
    counts_before = _counts(original)
    counts_after = _counts(edited)
    kept = {(_element(keys), what, repr(value) if what == "choices" else value) for keys, value, what in slots(out)
            if not isinstance(value, dict)}
    for keys, value, what in list(slots(out)):
        if isinstance(value, dict):
            continue
        marker = repr(value) if what == "choices" else value
        same_place = before.get(keys)
        found: dict[str, Any] | None
        if isinstance(same_place, dict) and same_place.get(default) == value:
            found = same_place
        else:
            moved = by_text.get((_element(keys), what, marker)) if isinstance(marker, str) else None
            # Edited in place: the text that stood here is nowhere else in its state now.
            edited_here = isinstance(same_place, dict) and counts_before.get(
                (_element(keys), what)) == counts_after.get((_element(keys), what)) and (
                _element(keys), what, repr(same_place.get(default)) if what == "choices" else same_place.get(default)
            ) not in kept
            found = moved[0] if moved else same_place if edited_here else None
        if found is None:
            continue
        merged = {k: v for k, v in copy.deepcopy(found).items() if k.startswith("x-") or k in new_codes}
        merged[default] = value
        if what == "choices":
            merged = {k: (_fitted(v, value) if isinstance(v, list) else v) for k, v in merged.items()}
        _set(out, keys, value if list(merged) == [default] else merged)
    return out


def _counts(document: dict[str, Any]) -> dict[tuple[Keys, str], int]:
    """How many texts of each kind each state (settings, commands) holds: added or removed ones shift places."""
    found: dict[tuple[Keys, str], int] = {}
    for keys, _value, what in slots(document):
        found[(_element(keys), what)] = found.get((_element(keys), what), 0) + 1
    return found


def _fitted(entries: list[str], default: list[str]) -> list[str]:
    """A language's choices as long as the default's: cut, or filled with the default's entries."""
    return entries[:len(default)] + default[len(entries):]


def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The translation table: one row per text with its path, its state and its text in every language."""
    codes = listed(document)
    default = codes[0] if codes else ""
    states = document.get("states") or []
    table = []
    for keys, value, what in slots(document):
        state = states[int(keys[1])].get("id") if keys[0] == "states" else None
        if what == "choices":
            cells = {code: "\n".join(_choices_in(value, code, default)) for code in codes}
        else:
            cells = {code: text_in(value, code, default) for code in codes}
        if not any(cells.values()):
            continue  # an empty text (a picture without a caption): nothing to translate
        table.append({"path": path_text(keys), "keys": keys, "state": state, "kind": what, "texts": cells,
                      "missing": [code for code in codes if not cells[code]]})
    return table


def find(document: dict[str, Any], path: str) -> tuple[Keys, str] | None:
    """The keys and kind of the text at `path` (as `rows` writes it), or None."""
    for keys, _value, what in slots(document):
        if path_text(keys) == path:
            return keys, what
    return None


def set_text(document: dict[str, Any], path: str, code: str, text: str) -> dict[str, Any]:
    """A copy with the text at `path` in language `code` set to `text` ("" removes that translation).

    For choices `text` holds one entry per line, as many as the default's (fewer are filled with the
    default's entries, more are cut), so every language keeps the same positions.
    """
    codes = listed(document)
    found = find(document, path)
    if not codes or code not in codes or found is None:
        raise KeyError(path)
    keys, what = found
    default = codes[0]
    out = copy.deepcopy(document)
    value = _get(out, keys)
    current = dict(value) if isinstance(value, dict) else {default: value}
    if what == "choices":
        entries = [line.strip() for line in text.splitlines() if line.strip()]
        base = current.get(default) or []
        if code == default:
            if not entries:
                raise ValueError("a choice input needs at least one choice in the default language")
            current[default] = entries
            current = {k: (_fitted(v, entries) if isinstance(v, list) and k != default else v)
                       for k, v in current.items()}
        elif entries:
            current[code] = _fitted(entries, base)
        else:
            current.pop(code, None)
    elif text or code == default:
        current[code] = text
    else:
        current.pop(code, None)
    only_default = set(k for k in current if not k.startswith("x-")) <= {default}
    _set(out, keys, current[default] if only_default and default in current and len(current) == 1 else current)
    return out
