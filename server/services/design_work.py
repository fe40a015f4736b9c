"""The designer's CPU-heavy steps as plain functions of document text, run in `server.design_pool`'s workers.

Each takes and returns plain data (text, dicts, tuples), so crossing the process boundary costs a copy of
the document's text, not a second parse; errors are the usual `AppError`/`FlowFormatError`, carried whole.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple

from flows.canonical import content_hash
from flows.diff import diff, is_empty
from flows.errors import FlowFormatError
from flows.export import export
from flows.load import load
from flows.model import Flow
from flows.validate import validation_result
from server.bodies import RawDocument, parse_document
from server.errors import Unprocessable


def to_text(document: dict[str, Any]) -> str:
    """A document as the JSON text we store; refuses text that cannot be stored as UTF-8."""
    text = json.dumps(document, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Unprocessable("The document contains an unpaired surrogate (\\ud800-\\udfff); "
                            "send proper Unicode text.", code="invalid_document",
                            details=[{"path": "", "message": "unpaired surrogate in a string"}]) from None
    return text


def check_document(raw: Any, allow: tuple[str, ...]) -> Flow:
    """A parsed body as a Flow; FlowFormatError (422 with one detail per problem) otherwise."""
    try:
        return load(raw, allow=allow)
    except RecursionError:
        raise FlowFormatError("The document is nested too deeply to read.",
                              [{"path": "", "message": "nested too deeply"}]) from None


def title_of(flow: Flow) -> str:
    return (flow.title or "").replace("\x00", "")[:500]


def draft_flow(document: dict[str, Any]) -> Flow:
    """A stored draft as a Flow (stored drafts always passed the loader; their action hosts were checked then)."""
    try:
        return load(document, allow=None)
    except RecursionError:
        raise FlowFormatError("The document is nested too deeply to read.",
                              [{"path": "", "message": "nested too deeply"}]) from None



class Checked(NamedTuple):
    """A document that passed the loader: its id, its title for lists, and the JSON text we store."""

    id: str
    title: str
    text: str


def checked(raw: RawDocument | Any, allow: tuple[str, ...]) -> Checked:
    """A request body or parsed document, loaded and checked; 422 with one detail per problem otherwise."""
    document = parse_document(raw) if isinstance(raw, RawDocument) else raw
    flow = check_document(document, allow)
    return Checked(flow.id, title_of(flow), to_text(flow.document))


class Stored(NamedTuple):
    """An edited draft that passed the loader: what to store, the document as stored, its validation answer."""

    checked: Checked
    document: dict[str, Any]
    validation: dict[str, Any]


def edit_checked(document: dict[str, Any], allow: tuple[str, ...]) -> Stored | FlowFormatError:
    """A side-panel edit loaded once: the loader's refusal (returned, for the form to show), else what to store
    together with the validation of the very flow it built (no second load for the issues pane)."""
    try:
        flow = check_document(document, allow)
    except FlowFormatError as exc:
        return exc
    return Stored(Checked(flow.id, title_of(flow), to_text(flow.document)), flow.document, validation_result(flow))


def validation_of(stored: str | dict[str, Any]) -> dict[str, Any]:
    """The validation answer for a stored document (its text, or parsed)."""
    return validation_result(draft_flow(json.loads(stored) if isinstance(stored, str) else stored))


def frozen(text: str) -> tuple[str, dict[str, Any]]:
    """A stored draft's version hash and its validation answer."""
    flow = draft_flow(json.loads(text))
    return content_hash(flow.document), validation_result(flow)


def exported(text: str, fmt: str, version: int | None) -> tuple[str, str]:
    """A stored document exported as `fmt`: (text, media type)."""
    flow = draft_flow(json.loads(text))
    flow.version = version
    return export(flow, fmt)


def difference(old: str, new: str) -> dict[str, Any]:
    """The semantic diff of two stored documents, with `identical`."""
    result = diff(json.loads(old), json.loads(new))
    return {"identical": is_empty(result), **result}
