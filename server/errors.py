"""One error hierarchy, rendered in one place as {"error", "message", "details"}."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Self

from litestar import Request, Response
from litestar.exceptions import HTTPException

from flows.errors import CarriedError, DocumentSyntaxError, FlowFormatError

log = logging.getLogger("botflow.errors")


def N_(text: str) -> str:
    """Marks an English text for extraction where it is defined (the services', the pages'); it is
    translated where a page shows it (web/locale has the translations)."""
    return text


class AppError(CarriedError):
    """An error a client can act on: status, machine code, sentence, optional details.

    `words`: the sentence's template (marked with N_) and its values, so the pages can say it in the
    reader's language; the API always answers the English `message`.
    """

    def __init__(self, status: int, code: str, message: str, details: list[Any] | None = None,
                 headers: dict[str, str] | None = None, params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        self.headers = headers or {}
        self.words: tuple[str, dict[str, Any]] | None = None  # set by `worded`
        # What the sentence names ({"flow": id}, {"bot": id}), for the pages' own words; never sent.
        self.params: dict[str, Any] = dict(params or {})

    @classmethod
    def worded(cls, template: str, values: dict[str, Any], **kwargs: Any) -> Self:
        """The error whose message is `template % values`, keeping both for the pages."""
        make: Callable[..., Self] = cls  # a subclass: its first argument is the sentence
        error = make(template % values, **kwargs)
        error.words = (template, values)
        return error


class BadRequest(AppError):
    def __init__(self, message: str, code: str = "bad_request", details: list[Any] | None = None) -> None:
        super().__init__(400, code, message, details)


class Unauthorized(AppError):
    def __init__(self, message: str = "Send a valid API token as 'Authorization: Bearer <token>'.") -> None:
        super().__init__(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


class Forbidden(AppError):
    def __init__(self, message: str, code: str = "forbidden") -> None:
        super().__init__(403, code, message)


class NotFound(AppError):
    def __init__(self, message: str, params: dict[str, Any] | None = None) -> None:
        super().__init__(404, "not_found", message, params=params)


class Conflict(AppError):
    def __init__(self, message: str, code: str = "conflict", details: list[Any] | None = None,
                 params: dict[str, Any] | None = None) -> None:
        super().__init__(409, code, message, details, params=params)


class PreconditionFailed(AppError):
    def __init__(self, message: str) -> None:
        super().__init__(412, "revision_mismatch", message)


class PreconditionRequired(AppError):
    def __init__(self, message: str) -> None:
        super().__init__(428, "if_match_required", message)


class Unprocessable(AppError):
    def __init__(self, message: str, code: str = "invalid_request", details: list[Any] | None = None) -> None:
        super().__init__(422, code, message, details)


class Unavailable(AppError):
    def __init__(self, message: str) -> None:
        super().__init__(503, "unavailable", message)


# Litestar's own exceptions (routing, body size, method) carry terse texts; these are the sentences we send.
HTTP_CODES: dict[int, tuple[str, str]] = {
    400: ("bad_request", "The request could not be understood."),
    401: ("unauthorized", "Send a valid API token as 'Authorization: Bearer <token>'."),
    403: ("forbidden", "This request is not allowed."),
    404: ("not_found", "There is nothing at this address; see /schema for the routes."),
    405: ("method_not_allowed", "This address does not accept that method; see /schema for the routes."),
    413: ("body_too_large", "The request body is too large; send a smaller document."),
    415: ("unsupported_media_type", "Send the body as application/json."),
    429: ("too_many_requests", "Too many requests; wait a moment and retry."),
}


def error_body(code: str, message: str, details: list[Any] | None = None) -> dict[str, Any]:
    """The JSON error shape every route uses."""
    return {"error": code, "message": message, "details": details or []}


def app_error_handler(_: Request, exc: AppError) -> Response:
    return Response(error_body(exc.code, exc.message, exc.details), status_code=exc.status,
                    headers=exc.headers or None)


def http_exception_handler(request: Request, exc: HTTPException) -> Response:
    status = exc.status_code
    code, sentence = HTTP_CODES.get(status, ("error" if status >= 500 else "bad_request", exc.detail))
    if status == 413:
        limit = request.route_handler.resolve_request_max_body_size() if "route_handler" in request.scope else None
        if limit:
            sentence = f"The request body is larger than the limit of {limit} bytes; send a smaller document."
    elif status == 400 and exc.detail and exc.detail != "Bad Request":
        sentence = str(exc.detail).rstrip(".") + "."
    details = exc.extra if isinstance(exc.extra, list) else []
    named = [d for d in details if isinstance(d, dict) and d.get("key") and d.get("source")]
    if status == 400 and named:  # a path or query value of the wrong kind: say which and what it must be
        details = [{"path": d["key"], "message": readable_problem(str(d.get("message") or ""))} for d in named]
        sentence = "Check the request: " + "; ".join(
            f"the {getattr(d['source'], 'value', d['source'])} parameter '{said['path'][:100]}' {said['message']}"
            for d, said in zip(named, details)) + "."
    headers = dict(exc.headers or {})
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc.detail)
    return Response(error_body(code, sentence, details), status_code=status, headers=headers or None)


def readable_problem(message: str) -> str:
    """A validator's note on a parameter ("Expected `int | null`, got `str`") as words a person acts on."""
    if message.startswith("Expected `int"):
        return "must be a whole number"
    if message.startswith(("Expected `float", "Expected `number")):
        return "must be a number"
    if message.startswith("Expected `bool"):
        return "must be true or false"
    if message.startswith("Missing required"):
        return "is missing"
    return message.rstrip(".") or "is not valid"


def internal_error_handler(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return Response(error_body("internal_error", "Something went wrong on the server; the error is logged."),
                    status_code=500)


def flow_format_handler(_: Request, exc: FlowFormatError) -> Response:
    return Response(error_body("invalid_document", exc.message, exc.details), status_code=422)


def document_syntax_handler(_: Request, exc: DocumentSyntaxError) -> Response:
    return Response(error_body("invalid_json", exc.message, [{"path": "", "message": exc.message}]),
                    status_code=422)


def recursion_handler(request: Request, exc: RecursionError) -> Response:
    """A body nested thousands deep overflows a parser wherever it is read: the client's mistake, a 400."""
    # Without a body, the depth came from stored data, which is a server error like any other.
    if request.method not in ("POST", "PUT", "PATCH"):
        return internal_error_handler(request, exc)
    log.warning("%s %s: a body nested too deeply to read", request.method, request.url.path)
    return Response(error_body("bad_request", "The request body is nested too deeply to read; flatten it."),
                    status_code=400)


EXCEPTION_HANDLERS = {
    AppError: app_error_handler,
    FlowFormatError: flow_format_handler,
    DocumentSyntaxError: document_syntax_handler,
    HTTPException: http_exception_handler,
    RecursionError: recursion_handler,
    Exception: internal_error_handler,
}
