"""Log output: one JSON object per line (BOTFLOW_LOG_FORMAT=json) or readable text, both scrubbed.

Structured fields come from `extra={...}`: request_id, bot, flow, version, outcome, duration, user, text.
User ids leave the process only as a keyed hash (HMAC with the secret key, 12 hex digits); message texts
are personal data, so they appear only at DEBUG; tokens and secrets are replaced by "***".
"""
from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import sys
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import Any

FIELDS = ("request_id", "bot", "flow", "version", "state", "outcome", "duration", "status", "attempt")
USER_FIELDS = ("user", "user_id", "chat_id")
TEXT_FIELDS = ("text",)
MASK = "***"
# The request being served, for every line logged while serving it (and by tasks it starts).
REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

# Credentials as they appear in headers, URLs, JSON and key=value pairs.
_SECRET_PATTERNS = [
    re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?(?:bearer|basic)\s+)[^\s'\",;]+"),
    re.compile(r"(?i)((?:access_token|token|secret|password|webhook_secret|api_key)['\"]?\s*[:=]\s*['\"]?)"
               r"[^\s'\",;&}]+"),
    re.compile(r"(?i)(x-max-bot-api-secret['\"]?\s*[:=]\s*['\"]?)[^\s'\",;]+"),
    re.compile(r"(://[^:/@\s]+:)[^@/\s]+(@)"),  # a password in a URL
]


class Scrubber:
    """Masks credentials by pattern, plus the deployment's own secret values wherever they appear."""

    def __init__(self, secrets: list[str | None]) -> None:
        self.values = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        for pattern in _SECRET_PATTERNS:
            text = pattern.sub(lambda m: m.group(1) + MASK + (m.group(2) if m.lastindex == 2 else ""), text)
        return text


class UserHasher:
    """A short keyed hash of a user id: the same user gives the same value, but it cannot be reversed."""

    def __init__(self, key: str) -> None:
        self.key = hashlib.sha256(("botflow-log-user:" + key).encode()).digest()

    def __call__(self, user: Any) -> str:
        return hmac.new(self.key, str(user).encode(), hashlib.sha256).hexdigest()[:12]


def _event(record: logging.LogRecord) -> str:
    """A stable name for what happened: `extra={"event": ...}`, else the message template."""
    given = getattr(record, "event", None)
    return str(given) if given else str(record.msg)


class _Base(logging.Formatter):
    def __init__(self, scrub: Scrubber, hash_user: UserHasher) -> None:
        super().__init__()
        self.scrub = scrub
        self.hash_user = hash_user

    def fields(self, record: logging.LogRecord) -> dict[str, Any]:
        """The structured extras of a record, users hashed, texts only at DEBUG."""
        out: dict[str, Any] = {}
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id:
            out["request_id"] = request_id
        for name in FIELDS:
            if name == "request_id":
                continue
            value = getattr(record, name, None)
            if value is not None:
                out[name] = value if isinstance(value, int | float | bool) else self.scrub(str(value))
        for name in USER_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                out[name] = self.hash_user(value)
        if record.levelno <= logging.DEBUG:
            for name in TEXT_FIELDS:
                value = getattr(record, name, None)
                if value is not None:
                    out[name] = self.scrub(str(value))
        return out

    def text(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        return self.scrub(message)


class JsonFormatter(_Base):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        body = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": self.scrub(_event(record)),
            "message": self.text(record),
            **self.fields(record),
        }
        return json.dumps(body, ensure_ascii=False, default=str)


class TextFormatter(_Base):
    """`time level logger: message key=value ...` for a person at a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        extras = " ".join(f"{k}={v}" for k, v in self.fields(record).items())
        return f"{when} {record.levelname:<7} {record.name}: {self.text(record)}" + (f"  [{extras}]" if extras else "")


def configure(fmt: str | None, secret_key: str, secrets: list[str | None], level: int = logging.INFO,
              stream: Any = None) -> logging.Handler:
    """Route every logger (uvicorn's and Alembic's too) through one scrubbed handler on stderr.

    `fmt` None picks text when stderr is a terminal and JSON otherwise (a container, a supervisor).
    """
    stream = stream or sys.stderr
    chosen = fmt or ("text" if getattr(stream, "isatty", lambda: False)() else "json")
    scrub, hash_user = Scrubber([secret_key, *secrets]), UserHasher(secret_key)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(scrub, hash_user) if chosen == "json" else TextFormatter(scrub, hash_user))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "alembic"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    return handler


class RequestIds:
    """ASGI wrapper: each HTTP request gets an id, the caller's X-Request-Id when it is a sane token."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        given = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                given = value.decode("latin-1")
                break
        token = REQUEST_ID.set(given if given and _REQUEST_ID_RE.match(given) else os.urandom(6).hex())
        try:
            await self.inner(scope, receive, send)
        finally:
            REQUEST_ID.reset(token)


def install_request_ids(app: Any) -> None:
    """Put RequestIds in front of Litestar (webhooks take the fast path ahead of it: bot and user name them)."""
    app.asgi_handler = RequestIds(app.asgi_handler)
