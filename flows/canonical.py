"""Canonical text of a flow document: the semantic hash and pretty JSON/YAML dumps."""
from __future__ import annotations

import hashlib
import json
from typing import Any

import yaml

TOP_ORDER = ("format", "id", "title", "start", "languages", "settings", "commands", "states", "transitions", "layout")
STATE_ORDER = ("id", "title", "final", "say", "input", "after_press", "note")
TRANSITION_ORDER = (
    "id", "from", "to", "on", "payload", "match", "pattern", "kinds", "name", "after", "if", "set", "actions",
    "language",
)


def canonical_json(document: Any) -> str:
    """Sorted keys, no spaces, UTF-8 characters as they are."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(document: dict[str, Any]) -> str:
    """`sha256:<hex>` of the canonical JSON without `layout`: key order and positions never matter."""
    semantic = {key: value for key, value in document.items() if key != "layout"}
    return "sha256:" + hashlib.sha256(canonical_json(semantic).encode("utf-8")).hexdigest()


def _ordered(obj: Any, order: tuple[str, ...]) -> Any:
    if not isinstance(obj, dict):
        return obj
    known = {key: obj[key] for key in order if key in obj}
    return {**known, **{key: value for key, value in obj.items() if key not in known}}


def ordered(document: dict[str, Any]) -> dict[str, Any]:
    """The document with keys in the spec's natural order (unknown keys after, as written)."""
    result: dict[str, Any] = _ordered(document, TOP_ORDER)
    if isinstance(result.get("states"), list):
        result["states"] = [_ordered(s, STATE_ORDER) for s in result["states"]]
    if isinstance(result.get("transitions"), list):
        result["transitions"] = [_ordered(t, TRANSITION_ORDER) for t in result["transitions"]]
    return result


def dump_json(document: dict[str, Any]) -> str:
    """Pretty JSON (indent 2) in the spec's key order, ending with a newline."""
    document = ordered(document)
    parts: list[str] = []
    try:
        _pretty(document, "\n", parts)
    except Exception:  # noqa: BLE001 - anything unusual: the json module says what it makes of it
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    parts.append("\n")
    return "".join(parts)


_quote = json.encoder.encode_basestring  # JSON string syntax, UTF-8 characters as they are
_INF = float("inf")


class _Unusual(Exception):
    """A value `_pretty` leaves to the json module."""


def _pretty(value: Any, newline: str, out: list[str]) -> None:
    """Append `json.dumps(value, indent=2, ensure_ascii=False)` in parts, for plain JSON data.

    With `indent` the json module falls back to its pure-Python encoder, several times slower than
    writing the same text here; `newline` is the line break plus the current indentation.
    """
    kind = type(value)
    if kind is str:
        out.append(_quote(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        lead = "{" + inner
        for key, sub in value.items():
            if type(key) is not str:
                raise _Unusual
            if type(sub) is str:  # the usual leaf, written without a call
                out.append(lead + _quote(key) + ": " + _quote(sub))
            else:
                out.append(lead + _quote(key) + ": ")
                _pretty(sub, inner, out)
            lead = "," + inner
        out.append(newline + "}")
    elif kind is list:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        lead = "[" + inner
        for sub in value:
            if type(sub) is str:
                out.append(lead + _quote(sub))
            else:
                out.append(lead)
                _pretty(sub, inner, out)
            lead = "," + inner
        out.append(newline + "]")
    elif value is None:
        out.append("null")
    elif kind is bool:
        out.append("true" if value else "false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and value == value and value not in (_INF, -_INF):
        out.append(float.__repr__(value))
    else:
        raise _Unusual


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Never writes anchors and aliases: a value used twice is written out twice, as the loader expects."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# PyYAML writes these unescaped in plain and single-quoted scalars, where a reader takes them for
# line breaks; double quotes make it escape them.
_BREAKS = ("\x85", "\u2028", "\u2029")


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = '"' if any(ch in text for ch in _BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(document: dict[str, Any]) -> str:
    """Block-style YAML in the spec's key order; loads back to the same document."""
    return yaml.dump(ordered(document), Dumper=_Dumper, allow_unicode=True, sort_keys=False,
                     default_flow_style=False)
