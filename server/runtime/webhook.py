"""Webhook deliveries: the answer to one, whatever channel parses its body (`server.channels`)."""
from __future__ import annotations

import hmac
import json
import logging
import re
from typing import Any, Awaitable, Callable

import msgspec

from server import metrics
from server.channels.base import BadUpdate, Ignored
from server.errors import error_body
from server.runtime.stores.base import StoreUnavailable

log = logging.getLogger("botflow.runtime.webhook")

OK_BODY = b'{"ok":true}'


def secret_ok(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison; a bot without a secret accepts nothing."""
    if not expected or given is None:
        return False
    # A header's value excludes the spaces around it (RFC 9110); parsers drop the leading ones only.
    return hmac.compare_digest(expected.encode(), given.strip(" \t").encode())


def _error(status: int, code: str, message: str) -> tuple[int, bytes]:
    return status, msgspec.json.encode(error_body(code, message))


# Bounded: only bots that exist get a label of their own (anything else counts as "-").
_ANSWERS = metrics.Children(metrics.WEBHOOK_REQUESTS)


def _counted(bot: str, answer: tuple[int, bytes]) -> tuple[int, bytes]:
    _ANSWERS(bot, str(answer[0])).inc()
    return answer


_IGNORED = metrics.Children(metrics.UPDATES_IGNORED)
_LOGGED: set[tuple[str, str]] = set()  # (bot, reason) said in the log already by this process


def ignored(bot: str, reason: str) -> None:
    """Count a delivery acknowledged without use; the first of each bot and reason is logged (by its
    reason alone: what the user wrote stays out of the log), the rest only counted."""
    _IGNORED(bot, reason).inc()
    if (bot, reason) not in _LOGGED:
        _LOGGED.add((bot, reason))
        log.info("update acknowledged and ignored (%s); further ones are only counted in "
                 "botflow_updates_ignored_total", reason,
                 extra={"event": "update_ignored", "bot": bot, "outcome": reason})


def not_json(raw: bytes, exc: msgspec.DecodeError) -> str:
    """Why msgspec refused `raw`, in words that fit (its own say "truncated" for an empty body and for a
    lone surrogate, and nothing clear for a byte order mark, NaN or a number past a float's range)."""
    if not raw.strip():
        return "it is empty"
    if raw.startswith(b"\xef\xbb\xbf"):
        return "it starts with a byte order mark; send UTF-8 without one"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"it is not UTF-8 (byte 0x{raw[bad.start]:02x} at offset {bad.start})"
    try:
        json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except _NotANumber as why:
        return str(why)
    except (ValueError, RecursionError):
        return str(exc)
    if _SURROGATE_ESCAPE.search(text):
        return "it holds an unpaired surrogate escape (\\ud800-\\udfff); send real Unicode characters"
    return str(exc)


class _NotANumber(ValueError):
    """A value JSON parsers disagree on: NaN, Infinity, or a number past a float's range."""


def _no_constant(name: str) -> Any:
    raise _NotANumber(f"it holds {name}, which is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotANumber(f"it holds the number {text[:40]}, too large to read")
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


async def answer(runtime: Any, bot_id: str, secret: str | None,
                 body: bytes | Callable[[], Awaitable[bytes]]) -> tuple[int, bytes]:
    """Status and JSON body for one delivery (`body`, or how to read it once the secret is checked);
    shared by the Litestar route and the ASGI fast path in front of it; `runtime.channel` reads it.

    200 once the turn is committed (its replies sent, or safely queued when the messenger is slow) or the
    update is acknowledged and ignored (counted by reason), 403 for a bad secret, 400 for a body that is not
    a JSON object, 503 when the storage is unreachable (the messenger delivers again).
    """
    try:
        bot = await runtime.catalog.bot(bot_id)
    except Exception:  # noqa: BLE001 - the database is down: let the messenger retry
        log.warning("bot lookup failed", exc_info=True, extra={"event": "webhook", "bot": bot_id, "outcome": "503"})
        return _counted("-", _error(503, "unavailable", "The bot's settings cannot be read right now; retry later."))
    if bot is None:  # not a label of its own: anyone can make up bot ids
        return _counted("-", _error(404, "not_found", f"There is no bot {bot_id!r}."))
    if not secret_ok(bot.secret, secret):
        return _counted(bot.id, _error(
            403, "forbidden", f"The {runtime.channel.secret_title} header does not match this bot's secret."))
    raw = body if type(body) is bytes else await body()  # type: ignore[operator]
    try:
        incoming = runtime.channel.parse(msgspec.json.decode(raw))
    except msgspec.DecodeError as exc:
        return _counted(bot.id, _error(400, "bad_update", f"The body is not an update: {not_json(raw, exc)}."))
    except BadUpdate as exc:
        return _counted(bot.id, _error(400, "bad_update", f"The body is not an update: {exc}."))
    except RecursionError:
        return _counted(bot.id, _error(400, "bad_update", "The body is not an update: it is nested too deeply."))
    if type(incoming) is Ignored:
        ignored(bot.id, incoming.reason)
        return _counted(bot.id, (200, OK_BODY))
    try:
        await runtime.dispatcher.handle(bot, incoming)
    except StoreUnavailable as exc:
        log.warning("webhook answered 503: %s", exc, extra={"event": "webhook", "bot": bot.id, "outcome": "503"})
        return _counted(bot.id, _error(
            503, "unavailable", "Dialog storage is unreachable; the update was not handled, retry."))
    return _counted(bot.id, (200, OK_BODY))
