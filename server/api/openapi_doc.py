"""What the generated OpenAPI document cannot know: the bodies handlers read themselves and the error shape."""
from __future__ import annotations

import copy
from typing import Any

from server.api import bots, simulate, users, versions
from server.body_fields import KIND_NAMES, Spec

ERROR_REF = {"$ref": "#/components/schemas/Error"}
ERROR = {
    "type": "object", "required": ["error", "message", "details"],
    "properties": {
        "error": {"type": "string", "description": "a machine-readable code such as invalid_document"},
        "message": {"type": "string", "description": "a sentence a person can act on"},
        "details": {"type": "array", "items": {},
                    "description": "for a malformed document, one {path, message} per problem"},
    },
}
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array",
              type(None): "null"}
FLOW_DOCUMENT = {
    "type": "object", "required": ["format", "id", "start", "states", "transitions"],
    "description": "a botflow/v1 flow document (see the flow format)",
    "properties": {"format": {"type": "string", "enum": ["botflow/v1"]}, "id": {"type": "string"},
                   "title": {"type": "string"}, "start": {"type": "string"},
                   "states": {"type": "array", "items": {"type": "object"}},
                   "transitions": {"type": "array", "items": {"type": "object"}}},
}
DOCUMENT_BODY = {"required": True, "content": {
    "application/json": {"schema": FLOW_DOCUMENT},
    "application/yaml": {"schema": {"type": "string", "description": "the same document as YAML"}}}}


def object_schema(spec: Spec) -> dict[str, Any]:
    """A JSON schema from a server.bodies.fields() spec, so the document and the check are one table."""
    properties = {}
    for name, (kinds, _) in spec.items():
        names = [JSON_TYPES[k] for k in (kinds if isinstance(kinds, tuple) else (kinds,)) if k in KIND_NAMES]
        properties[name] = {"type": names[0] if len(names) == 1 else names}
    return {"type": "object", "additionalProperties": False, "properties": properties,
            "required": [name for name, (_, required) in spec.items() if required]}


def json_body(spec: Spec, *, required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": object_schema(spec)}}}


REQUEST_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/api/flows"): DOCUMENT_BODY,
    ("put", "/api/flows/{flow_id}"): DOCUMENT_BODY,
    ("post", "/api/flows/{flow_id}/versions"): json_body(versions.FREEZE_FIELDS, required=False),
    ("post", "/api/flows/{flow_id}/simulate"): json_body(simulate.SIMULATE_FIELDS),
    ("post", "/api/bots"): json_body(bots.BOT_FIELDS),
    ("put", "/api/bots/{bot_id}"): json_body(bots.CHANGE_FIELDS),
    ("patch", "/api/bots/{bot_id}"): json_body(bots.CHANGE_FIELDS),
    ("post", "/api/bots/{bot_id}/publish"): json_body(bots.PUBLISH_FIELDS),
    ("post", "/api/users"): json_body(users.CREATE_FIELDS),
    ("patch", "/api/users/{username}"): json_body(users.CHANGE_FIELDS),
    ("post", "/api/users/{username}/tokens"): json_body(users.TOKEN_FIELDS, required=False),
    ("post", "/api/bots/{bot_id}/experiment"): {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "additionalProperties": False, "required": ["flow", "arms", "goal"],
        "properties": {
            "flow": {"type": "string"},
            "arms": {"type": "array", "minItems": 2, "maxItems": 4, "items": {
                "type": "object", "additionalProperties": False, "required": ["version", "weight"],
                "properties": {"version": {"type": "integer", "minimum": 1}, "weight": {"type": "integer", "minimum": 1}}}},
            "goal": {"type": "object", "additionalProperties": False, "required": ["state"],
                     "properties": {"state": {"type": "string"}}},
            "auto_promote": {"type": ["object", "null"], "additionalProperties": False,
                             "required": ["confidence", "min_dialogs"],
                             "properties": {"confidence": {"type": "number", "minimum": 0.5, "exclusiveMaximum": 1},
                                            "min_dialogs": {"type": "integer", "minimum": 1}}}}}}}},
    ("post", "/api/bots/{bot_id}/experiment/stop"): {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "additionalProperties": False,
        "properties": {"promote": {"type": ["integer", "null"], "minimum": 1}}}}}},
}
METHODS = ("get", "put", "post", "delete", "patch")


def documented(schema: dict[str, Any]) -> dict[str, Any]:
    """The generated document plus request bodies and {"error", "message", "details"} for every 4xx and 5xx."""
    doc = copy.deepcopy(schema)
    components = doc.setdefault("components", {})
    components.setdefault("schemas", {})["Error"] = ERROR
    # Every /api route takes an API token; the pages' session cookie is the browser's business.
    components.setdefault("securitySchemes", {})["bearer"] = {
        "type": "http", "scheme": "bearer", "description": "An API token: Authorization: Bearer <token>."}
    for path, item in doc.get("paths", {}).items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            if path.startswith("/api/"):
                operation["security"] = [{"bearer": []}]
            body = REQUEST_BODIES.get((method, path))
            if body is not None:
                operation["requestBody"] = copy.deepcopy(body)
            responses = operation.setdefault("responses", {})
            for code in [c for c in responses if c[:1] in ("4", "5")]:
                del responses[code]
            responses["4XX"] = {"description": "The request cannot be served; the message says why.",
                                "content": {"application/json": {"schema": ERROR_REF}}}
            responses["5XX"] = {"description": "The server or a service it needs failed.",
                                "content": {"application/json": {"schema": ERROR_REF}}}
    return doc
