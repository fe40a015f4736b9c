"""Canonical text of a flow document: the semantic hash and pretty JSON/YAML dumps."""
from __future__ import annotations

import hashlib
import json
from typing import Any

import yaml

TOP_ORDER = ("format", "id", "title", "start", "settings", "commands", "states", "transitions", "layout")
STATE_ORDER = ("id", "title", "final", "say", "input", "note")
TRANSITION_ORDER = (
    "id", "from", "to", "on", "payload", "match", "pattern", "kinds", "name", "after", "if", "set", "actions",
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
    result = _ordered(document, TOP_ORDER)
    if isinstance(result.get("states"), list):
        result["states"] = [_ordered(s, STATE_ORDER) for s in result["states"]]
    if isinstance(result.get("transitions"), list):
        result["transitions"] = [_ordered(t, TRANSITION_ORDER) for t in result["transitions"]]
    return result


def dump_json(document: dict[str, Any]) -> str:
    """Pretty JSON (indent 2) in the spec's key order, ending with a newline."""
    return json.dumps(ordered(document), indent=2, ensure_ascii=False) + "\n"


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
