"""Checking a decoded JSON body field by field: one detail (path, message) per unknown, missing or mistyped field."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from flows.text_rule import UNCLEAN, clean_text, unclean_at
from server.errors import Unprocessable

__all__ = ["Spec", "clean_text", "fields", "type_name", "unclean_at"]

# A body's fields: {name: (the type or types its value may have, whether it is required)}.
Spec: TypeAlias = Mapping[str, tuple[type | tuple[type, ...], bool]]


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _fits(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False
    return isinstance(value, kinds)


KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", dict: "an object",
              list: "an array", type(None): "null"}


def fields(body: dict[str, Any], spec: Spec) -> dict[str, Any]:
    """Check a body against {name: (types, required)}: one detail per unknown, missing or mistyped field."""
    details: list[dict[str, str]] = []
    for name in body:
        if name not in spec:
            details.append({"path": name, "message": f"unknown field; expected {', '.join(spec)}"})
    for name, (kind, required) in spec.items():
        if name not in body:
            if required:
                details.append({"path": name, "message": "this field is required"})
            continue
        value = body[name]
        if not _fits(value, kind):
            kinds = kind if isinstance(kind, tuple) else (kind,)
            wanted = " or ".join(KIND_NAMES.get(k, k.__name__) for k in kinds)
            details.append({"path": name, "message": f"expected {wanted}, got {type_name(value)}"})
        elif isinstance(value, str) and not clean_text(value):
            details.append({"path": name, "message": UNCLEAN})
        elif isinstance(value, (dict, list)) and (where := unclean_at(value)) is not None:
            details.append({"path": name + where, "message": UNCLEAN})
    if details:
        problems = "; ".join(f"{d['path']}: {d['message']}" for d in details)
        raise Unprocessable(f"The request body has {len(details)} problem{'s' if len(details) != 1 else ''}: "
                            f"{problems}.", details=details)
    return body
