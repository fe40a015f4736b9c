"""Semantic diff of two flow documents: what a reviewer needs to see between versions."""
from __future__ import annotations

from typing import Any

from flows.languages import listed, path_text, slots
from flows.translations import flat, text_in

_ABSENT = object()
# Handled on their own, or not semantic (`layout` is editor positions only).
_OWN_KEYS = ("format", "id", "title", "start", "settings", "commands", "states", "transitions", "layout")


def _path(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else key


def _nested(value: Any) -> bool:
    """A non-empty object, or a list holding objects or lists: compared entry by entry."""
    if isinstance(value, dict):
        return bool(value)
    return isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)


def _changes(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    """Leaf-level differences as {"field", "from", "to", "change"}; lists of plain values are leaves."""
    if old == new:
        return []
    # A whole object added or removed is listed field by field too.
    if old is _ABSENT and _nested(new):
        old = type(new)()
    elif new is _ABSENT and _nested(old):
        new = type(old)()
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new), key=str)
        return [c for k in keys for c in _changes(old.get(k, _ABSENT), new.get(k, _ABSENT), _path(path, k))]
    if isinstance(old, list) and isinstance(new, list) and (_nested(old) or _nested(new)):
        return [c for i in range(max(len(old), len(new)))
                for c in _changes(old[i] if i < len(old) else _ABSENT,
                                  new[i] if i < len(new) else _ABSENT, _path(path, i))]
    # `change` tells an absent field from an explicit null (a null command is disabled, an absent one default).
    change = "added" if old is _ABSENT else "removed" if new is _ABSENT else "changed"
    return [{"field": path,
             "from": None if old is _ABSENT else old,
             "to": None if new is _ABSENT else new,
             "change": change}]


def _keyed(items: Any, key_of: Any) -> dict[str, dict[str, Any]]:
    """Items by key, in document order; repeated keys get `#2`, `#3`, ... so none is lost."""
    out: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(items if isinstance(items, list) else []):
        if not isinstance(entry, dict):
            continue
        key = base = key_of(entry, index)
        n = 1
        while key in out:
            n += 1
            key = f"{base}#{n}"
        out[key] = entry
    return out


def _transition_key(entry: dict[str, Any], index: int) -> str:
    tid = entry.get("id")
    return tid if isinstance(tid, str) and tid else f"#{index}:{entry.get('from')}->{entry.get('to')}"


def _collection(old: Any, new: Any, key_of: Any) -> dict[str, Any]:
    """Added, removed and changed entries of a list of objects matched by id."""
    before, after = _keyed(old, key_of), _keyed(new, key_of)
    changed = []
    for key, entry in after.items():
        if key in before:
            fields = _changes({k: v for k, v in before[key].items() if k != "id"},
                              {k: v for k, v in entry.items() if k != "id"})
            if fields:
                changed.append({"id": key, "fields": fields})
    return {"added": [k for k in after if k not in before],
            "removed": [k for k in before if k not in after],
            "changed": changed}


def _scalar(old: dict[str, Any], new: dict[str, Any], key: str) -> dict[str, Any] | None:
    a, b = old.get(key), new.get(key)
    return None if a == b else {"from": a, "to": b}


def _order(old: Any, new: Any) -> dict[str, list[str]] | None:
    """The order of the transitions both documents keep, when it changed (first match wins)."""
    before, after = list(_keyed(old, _transition_key)), list(_keyed(new, _transition_key))
    common = set(before) & set(after)
    a, b = [k for k in before if k in common], [k for k in after if k in common]
    return None if a == b else {"from": a, "to": b}


def _texts(document: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Every translatable text by path, then by language (choices one per line); a plain string is the default's."""
    codes = listed(document)
    if not codes:
        return {}
    out: dict[str, dict[str, str]] = {}
    for keys, value, what in slots(document):
        texts = {}
        for code in codes:
            if what == "choices":
                own = value.get(code) if isinstance(value, dict) else (value if code == codes[0] else None)
                texts[code] = "\n".join(str(v) for v in own) if isinstance(own, list) else ""
            else:
                texts[code] = text_in(value, code, codes[0]) if isinstance(value, (str, dict)) else ""
        out[path_text(keys)] = texts
    return out


def translations(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The texts changed in a language other than the default (the default's show with their state), as
    {"path", "language", "from", "to"}; "" is no translation."""
    before, after = _texts(old), _texts(new)
    codes = [c for c in dict.fromkeys([*listed(old), *listed(new)])]
    default = (listed(new) or listed(old) or ("",))[0]
    found = []
    for path in dict.fromkeys([*before, *after]):
        for code in codes:
            if code == default:
                continue
            a, b = before.get(path, {}).get(code, ""), after.get(path, {}).get(code, "")
            if a != b:
                found.append({"path": path, "language": code, "from": a, "to": b, "state": _state_at(new, old, path)})
    return found


def _state_at(new: dict[str, Any], old: dict[str, Any], path: str) -> str | None:
    """The id of the state a text path is in (the newer document's, else the older's), or None."""
    if not path.startswith("states["):
        return None
    index = int(path[7:path.index("]")])
    for document in (new, old):
        states = document.get("states")
        if isinstance(states, list) and index < len(states) and isinstance(states[index], dict):
            return str(states[index].get("id"))
    return None


def diff(old_document: dict[str, Any], new_document: dict[str, Any]) -> dict[str, Any]:
    """Changes from `old_document` to `new_document`; `layout` is ignored, list entries are in document order.

    Texts are compared in the default language with their states; the other languages' changes are listed
    under `translations`.
    """
    raw_old, raw_new = old_document or {}, new_document or {}
    old, new = flat(raw_old), flat(raw_new)
    transitions = _collection(old.get("transitions"), new.get("transitions"), _transition_key)
    transitions["order"] = _order(old.get("transitions"), new.get("transitions"))
    other = {k: v for k, v in old.items() if k not in _OWN_KEYS}
    return {
        "format": _scalar(old, new, "format"),
        "id": _scalar(old, new, "id"),
        "title": _scalar(old, new, "title"),
        "start": _scalar(old, new, "start"),
        "settings": _changes(old.get("settings") or {}, new.get("settings") or {}),
        "commands": _changes(old.get("commands") or {}, new.get("commands") or {}),
        "states": _collection(old.get("states"), new.get("states"),
                              lambda entry, index: str(entry.get("id", f"#{index}"))),
        "transitions": transitions,
        "other": _changes(other, {k: v for k, v in new.items() if k not in _OWN_KEYS}),
        "translations": translations(raw_old, raw_new),
    }


def is_empty(result: dict[str, Any]) -> bool:
    """Whether a diff found no semantic change."""
    for value in result.values():
        if isinstance(value, dict) and set(value) >= {"added", "removed", "changed"}:
            if any(value[k] for k in ("added", "removed", "changed", "order") if k in value):
                return False
        elif value:
            return False
    return True
