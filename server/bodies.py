"""Reading request bodies ourselves, so every malformed body gets a 4xx with a sentence."""
from __future__ import annotations

import asyncio
import json
from typing import Any, NamedTuple

from litestar import Request

from flows.errors import DocumentSyntaxError
from flows.load import json_problem, parse_text
from flows.unique_keys import DuplicateKey, unique_object
from server.body_fields import clean_text, type_name
from server.errors import AppError, BadRequest, Unprocessable

JSON_TYPES = ("application/json", "text/json")
YAML_TYPES = ("application/yaml", "text/yaml", "application/x-yaml", "text/x-yaml")


def media_type(request: Request) -> str | None:
    """The Content-Type without parameters, lower-cased; None when absent."""
    value = request.headers.get("content-type")
    if not value:
        return None
    return value.split(";", 1)[0].strip().lower() or None


def unsupported(kind: str | None, accepted: str) -> AppError:
    return AppError(415, "unsupported_media_type",
                    f"Content-Type {kind} is not accepted here; send {accepted}.")


BODY_SECONDS = 30.0  # a body still arriving after this is given up on (a slow client must not hold a worker)


async def read_body(request: Request) -> bytes:
    """The raw body, read at most BODY_SECONDS; 408 with a sentence when it does not arrive in time."""
    try:
        async with asyncio.timeout(BODY_SECONDS):
            return await request.body()
    except TimeoutError:
        raise AppError(408, "request_timeout", f"The request body did not arrive within {BODY_SECONDS:g} seconds;"
                                               " send the request again.") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


async def json_body(request: Request, *, required: bool = True) -> dict[str, Any]:
    """The body as a JSON object; 415/400/422 with a sentence otherwise. An empty optional body is {}."""
    kind = media_type(request)
    if kind is not None and kind not in JSON_TYPES and not kind.endswith("+json"):
        raise unsupported(kind, "application/json")
    raw = await read_body(request)
    if not raw.strip():
        if required:
            raise BadRequest("The request needs a JSON object as its body.", code="invalid_json")
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"The body is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
                         "cannot be decoded.", code="invalid_json") from None
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=unique_object)
    except DuplicateKey as exc:
        raise BadRequest(f"The body is not valid JSON: {exc}.", code="invalid_json",
                         details=[{"path": exc.key, "message": "appears twice in one object"}]) from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"The body is not valid JSON: {json_problem(exc)}.", code="invalid_json") from None
    except RecursionError:
        raise BadRequest("The body is nested too deeply to read.", code="invalid_json") from None
    except ValueError as exc:
        raise BadRequest(unreadable(exc, "The body is not valid JSON"), code="invalid_json") from None
    if not isinstance(data, dict):
        raise Unprocessable(f"The body must be a JSON object, not {type_name(data)}.",
                            details=[{"path": "", "message": "expected an object"}])
    return data


class RawDocument(NamedTuple):
    """A flow document's body as received: bytes and the format its Content-Type names (None: sniffed)."""

    raw: bytes
    fmt: str | None


async def document_body(request: Request) -> RawDocument:
    """A flow document's body (JSON or YAML by Content-Type; sniffed when there is none), not parsed yet:
    parsing a large one is CPU work for `server.design_pool`, see `parse_document`."""
    kind = media_type(request)
    if kind in JSON_TYPES or (kind or "").endswith("+json"):
        fmt: str | None = "json"
    elif kind in YAML_TYPES or (kind or "").endswith("+yaml"):
        fmt = "yaml"
    elif kind is None:
        fmt = None
    else:
        raise unsupported(kind, "application/json or application/yaml")
    raw = await read_body(request)
    if not raw.strip():
        raise malformed("The request needs a flow document as its body (JSON or YAML).", _syntax_code(fmt))
    return RawDocument(raw, fmt)


def _syntax_code(fmt: str | None) -> str:
    return "invalid_yaml" if fmt == "yaml" else "invalid_json"


def parse_document(body: RawDocument) -> Any:
    """The parsed document; 422 with a sentence when it cannot be read at all."""
    code = _syntax_code(body.fmt)
    try:
        return parse_text(body.raw, body.fmt)
    except DocumentSyntaxError as exc:
        raise malformed(exc.message, code) from None
    except RecursionError:
        raise malformed("The document is nested too deeply to read.", code) from None
    except ValueError as exc:
        raise malformed(unreadable(exc), code) from None


def unreadable(exc: ValueError, lead: str = "The document cannot be read") -> str:
    """A sentence for a parser's ValueError (Python refuses integers of more than 4300 digits)."""
    if "integer string conversion" in str(exc):
        return f"{lead}: it holds a number with thousands of digits; write numbers with at most 4300 digits."
    return f"{lead}: {str(exc)[:200].rstrip('.')}."


def malformed(message: str, code: str) -> Unprocessable:
    """A flow document that cannot be read at all: the spec's 422 for a malformed document, one detail."""
    return Unprocessable(message, code=code, details=[{"path": "", "message": message}])



def if_match(request: Request) -> list[str] | None:
    """Revisions named by If-Match (quoted, unquoted or W/); None for a bare `*` or a missing header.

    `"*"` is an ordinary tag that names no revision, so it never matches.
    """
    values = request.headers.getall("if-match", [])
    if not values:
        return None
    value = ",".join(values)  # repeated headers are one list (RFC 9110)
    if value.strip() == "*":
        return None
    tags = []
    for part in value.split(","):
        tag = part.strip()
        if tag.startswith(("W/", "w/")):  # tolerated: a proxy that compresses answers weakens their ETag
            tag = tag[2:].strip()
        if tag == "*":
            continue  # a * inside a list is not the wildcard; it names no revision
        tag = tag.strip('"').strip()
        if tag and clean_text(tag):
            tags.append(tag)
    return tags
