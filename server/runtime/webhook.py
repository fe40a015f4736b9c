"""MAX webhook deliveries: the answer to one, and the MAX body → engine update (owner, chat, redelivery key)."""
from __future__ import annotations

import hmac
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import msgspec

from flows.session import Update
from server import metrics
from server.errors import error_body
from server.runtime.stores.base import StoreUnavailable
from server.services.privacy import USER_ID_MAX

log = logging.getLogger("botflow.runtime.webhook")

SECRET_HEADER = "x-max-bot-api-secret"
OK_BODY = b'{"ok":true}'

# Update types that reach a dialog; every other type is accepted with 200 and ignored.
HANDLED = ("message_created", "message_callback", "bot_started")


class BadUpdate(ValueError):
    """The body is not a MAX update this runtime can read (answered with 400)."""


@dataclass(slots=True)
class Incoming:
    """One parsed delivery."""

    update: Update
    user: str  # the dialog's owner within the bot
    chat_id: int | None  # where replies go
    dedupe: str  # recognises a redelivery of this very update
    callback_id: str | None = None  # a button press to acknowledge


def secret_ok(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison; a bot without a secret accepts nothing."""
    if not expected or given is None:
        return False
    # A header's value excludes the spaces around it (RFC 9110); parsers drop the leading ones only.
    return hmac.compare_digest(expected.encode(), given.strip(" \t").encode())


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadUpdate(f"{where} must be an object")
    return value


def _user_id(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= USER_ID_MAX:
        raise BadUpdate(f"{where} must be a positive integer user id (at most {USER_ID_MAX})")
    return value


def _chat(value: Any, where: str) -> int | None:
    """Where replies go; a chat id is a signed 64-bit integer (anything else that is not a number: none)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if not -CHAT_ID_LIMIT <= value < CHAT_ID_LIMIT:
        raise BadUpdate(f"{where} must be a 64-bit chat id (from -2^63 to 2^63-1)")
    return value


CHAT_ID_LIMIT = 2 ** 63
MAX_ID_LENGTH = 1024  # message and callback ids are keys of the duplicate marks: MAX's are a few dozen characters


def _name(value: Any, where: str, example: str = "") -> str:
    """A required, non-empty string field (an update type, a message or callback id)."""
    if value is None or value == "":
        raise BadUpdate(f"{where} is missing")
    if not isinstance(value, str):
        raise BadUpdate(f"{where} must be a string{example}")
    if len(value) > MAX_ID_LENGTH:
        raise BadUpdate(f"{where} is {len(value):,} characters long; at most {MAX_ID_LENGTH} are accepted")
    return value


def _text(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise BadUpdate(f"{where} must be a string")
    return value


def parse_max_update(raw: Any) -> Incoming | None:
    """The engine update of a MAX delivery; None for a well-formed type the runtime ignores."""
    body = _obj(raw, "the update")
    kind = _name(body.get("update_type"), "update_type", ' such as "message_created"')
    if kind == "message_created":
        return _message(body)
    if kind == "message_callback":
        return _callback(body)
    if kind == "bot_started":
        return _started(body)
    return None


def _message(body: dict[str, Any]) -> Incoming | None:
    message = _obj(body.get("message"), "message")
    sender = _obj(message.get("sender"), "message.sender")
    if sender.get("is_bot") is True:
        return None  # our own (or another bot's) message echoed into a chat
    user = _user_id(sender.get("user_id"), "message.sender.user_id")
    content = _obj(message.get("body"), "message.body")
    mid = _name(content.get("mid"), "message.body.mid")
    attachments = content.get("attachments") or []
    if not isinstance(attachments, list) or not all(isinstance(a, dict) for a in attachments):
        raise BadUpdate("message.body.attachments must be a list of objects")
    attachments = [a for a in attachments if a.get("type") != "inline_keyboard"]
    recipient = message.get("recipient") if isinstance(message.get("recipient"), dict) else {}
    update = Update.message(_text(content.get("text"), "message.body.text"), attachments)
    return Incoming(update, str(user), _chat(recipient.get("chat_id"), "message.recipient.chat_id"), "m:" + mid)


def _callback(body: dict[str, Any]) -> Incoming:
    callback = _obj(body.get("callback"), "callback")
    user = _user_id(_obj(callback.get("user"), "callback.user").get("user_id"), "callback.user.user_id")
    callback_id = _name(callback.get("callback_id"), "callback.callback_id")
    payload = _text(callback.get("payload"), "callback.payload") or ""
    message = body.get("message") if isinstance(body.get("message"), dict) else {}
    recipient = message.get("recipient") if isinstance(message.get("recipient"), dict) else {}
    chat = _chat(recipient.get("chat_id"), "message.recipient.chat_id")
    return Incoming(Update.button(payload), str(user), chat, "c:" + callback_id, callback_id)


def _started(body: dict[str, Any]) -> Incoming:
    user = _user_id(_obj(body.get("user"), "user").get("user_id"), "user.user_id")
    stamp = body.get("timestamp")
    if isinstance(stamp, bool) or not isinstance(stamp, int):
        raise BadUpdate("timestamp must be an integer")
    payload = _text(body.get("payload"), "payload")  # a deep link's text, or none
    # The user is already part of every dialog key, so the timestamp alone tells deliveries apart.
    return Incoming(Update.started(payload), str(user), _chat(body.get("chat_id"), "chat_id"), f"s:{stamp}")


def _error(status: int, code: str, message: str) -> tuple[int, bytes]:
    return status, msgspec.json.encode(error_body(code, message))


# Bounded: only bots that exist get a label of their own (anything else counts as "-").
_ANSWERS = metrics.Children(metrics.WEBHOOK_REQUESTS)


def _counted(bot: str, answer: tuple[int, bytes]) -> tuple[int, bytes]:
    _ANSWERS(bot, str(answer[0])).inc()
    return answer


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
    shared by the Litestar route, the ASGI fast path and the webhook protocol.

    200 once the turn is committed (its replies sent, or safely queued when MAX is slow), 403 for a bad
    secret, 400 for a body that is not a MAX update, 503 when the storage is unreachable (MAX retries).
    """
    try:
        bot = await runtime.catalog.bot(bot_id)
    except Exception:  # noqa: BLE001 - the database is down: let MAX retry
        log.warning("bot lookup failed", exc_info=True, extra={"event": "webhook", "bot": bot_id, "outcome": "503"})
        return _counted("-", _error(503, "unavailable", "The bot's settings cannot be read right now; retry later."))
    if bot is None:  # not a label of its own: anyone can make up bot ids
        return _counted("-", _error(404, "not_found", f"There is no bot {bot_id!r}."))
    if not secret_ok(bot.secret, secret):
        return _counted(bot.id, _error(
            403, "forbidden", "The X-Max-Bot-Api-Secret header does not match this bot's secret."))
    raw = body if type(body) is bytes else await body()  # type: ignore[operator]
    try:
        incoming = parse_max_update(msgspec.json.decode(raw))
    except msgspec.DecodeError as exc:
        return _counted(bot.id, _error(400, "bad_update", f"The body is not a MAX update: {not_json(raw, exc)}."))
    except BadUpdate as exc:
        return _counted(bot.id, _error(400, "bad_update", f"The body is not a MAX update: {exc}."))
    except RecursionError:
        return _counted(bot.id, _error(400, "bad_update", "The body is not a MAX update: it is nested too deeply."))
    if incoming is None:
        return _counted(bot.id, (200, OK_BODY))
    try:
        await runtime.dispatcher.handle(bot, incoming)
    except StoreUnavailable as exc:
        log.warning("webhook answered 503: %s", exc, extra={"event": "webhook", "bot": bot.id, "outcome": "503"})
        return _counted(bot.id, _error(
            503, "unavailable", "Dialog storage is unreachable; the update was not handled, retry."))
    return _counted(bot.id, (200, OK_BODY))
