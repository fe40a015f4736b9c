"""The official MAX schema (`max-openapi.yaml` beside this file) as JSON Schema validators (jsonschema-rs).

OpenAPI 3.0 says two things JSON Schema says otherwise, and they are translated, nothing else: `nullable`
(a null is then allowed too), and `discriminator` (the mapped schema is chosen by the property's value;
the schemas it maps to extend their parent through `allOf`, so they get the parent without its mapping,
else validating one would recurse forever).
"""
from __future__ import annotations

import copy
import logging
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

SCHEMA_FILE = Path(__file__).with_name("max-openapi.yaml")
log = logging.getLogger("botflow.fake_max")
_REF = "#/components/schemas/"
# Keywords whose value is one schema, a list of schemas, or a map of names to schemas.
_ONE = ("items", "additionalProperties", "not")
_MANY = ("allOf", "anyOf", "oneOf")


def _walk(node: Any) -> Any:
    """One schema with `nullable: true` made into "this, or null", in every schema it holds."""
    if not isinstance(node, dict):
        return node
    out = dict(node)
    for key in _ONE:
        if isinstance(out.get(key), dict):
            out[key] = _walk(out[key])
    for key in _MANY:
        if isinstance(out.get(key), list):
            out[key] = [_walk(s) for s in out[key]]
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: _walk(s) for name, s in out["properties"].items()}
    if out.pop("nullable", False):
        return {"anyOf": [{"type": "null"}, out]}
    return out


def _rebase(node: Any, parent: str, base: str) -> Any:
    """`node` with its `allOf` references to `parent` pointing at `base` instead."""
    if isinstance(node, dict):
        if node.get("$ref") == _REF + parent:
            return {**node, "$ref": _REF + base}
        return {key: _rebase(value, parent, base) for key, value in node.items()}
    if isinstance(node, list):
        return [_rebase(value, parent, base) for value in node]
    return node


@lru_cache(maxsize=1)
def schemas() -> dict[str, Any]:
    """components.schemas of the official schema, translated to JSON Schema (draft 7)."""
    document = yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8"))
    found: dict[str, Any] = copy.deepcopy(document["components"]["schemas"])
    for name in [n for n, s in found.items() if isinstance(s, dict) and "discriminator" in s]:
        parent = found[name]
        rule = parent.pop("discriminator")
        parent.pop("oneOf", None)
        base = name + "__base"
        found[base] = dict(parent)
        prop, mapping = rule["propertyName"], rule.get("mapping") or {}
        for target in set(mapping.values()):
            target_name = target.removeprefix(_REF)
            found[target_name] = _rebase(found[target_name], name, base)
        found[name] = {"allOf": [{"$ref": _REF + base}] + [
            {"if": {"properties": {prop: {"const": value}}, "required": [prop]}, "then": {"$ref": target}}
            for value, target in mapping.items()]}
        if mapping:
            found[name]["allOf"].append({"properties": {prop: {"enum": list(mapping)}}})
    return {name: _walk(schema) for name, schema in found.items()}


@lru_cache(maxsize=64)
def validator(name: str) -> Any:
    """A validator of one of the schema's definitions (e.g. "NewMessageBody", "Update"); None where
    jsonschema-rs (the test extra) is not installed."""
    try:
        import jsonschema_rs  # the test extra: the tests and the fake MAX validate, the server never does
    except ImportError:
        log.warning("jsonschema-rs is not installed (pip install botflow[test]): the fake MAX takes bodies"
                    " without checking them against the MAX schema")
        return None
    if name not in schemas():
        raise KeyError(f"the MAX schema defines no {name!r}")
    return jsonschema_rs.Draft7Validator({"$ref": _REF + name, "components": {"schemas": schemas()}})


def problems(name: str, value: Any) -> list[str]:
    """What in `value` the schema's `name` refuses (none: it is valid), each as "path: message"."""
    check = validator(name)
    if check is None:
        return []
    return [f"{'/'.join(str(p) for p in error.instance_path) or '(top)'}: {error.message}"
            for error in check.iter_errors(value)]
