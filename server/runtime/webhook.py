"""MAX updates → engine updates: who the dialog belongs to, where replies go, how to spot a redelivery."""
from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any

from flows.session import Update

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
    return hmac.compare_digest(expected.encode(), given.encode())


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadUpdate(f"{where} must be an object")
    return value


def _user_id(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadUpdate(f"{where} must be an integer user id")
    return value


def _chat(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise BadUpdate(f"{where} must be a string")
    return value


def parse_update(raw: Any) -> Incoming | None:
    """The engine update of a MAX delivery; None for a well-formed type the runtime ignores."""
    body = _obj(raw, "the update")
    kind = body.get("update_type")
    if not isinstance(kind, str) or not kind:
        raise BadUpdate("update_type is missing")
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
    mid = content.get("mid")
    if not isinstance(mid, str) or not mid:
        raise BadUpdate("message.body.mid is missing")
    attachments = content.get("attachments") or []
    if not isinstance(attachments, list) or not all(isinstance(a, dict) for a in attachments):
        raise BadUpdate("message.body.attachments must be a list of objects")
    attachments = [a for a in attachments if a.get("type") != "inline_keyboard"]
    recipient = message.get("recipient") if isinstance(message.get("recipient"), dict) else {}
    update = Update.message(_text(content.get("text"), "message.body.text"), attachments)
    return Incoming(update, str(user), _chat(recipient.get("chat_id")), "m:" + mid)


def _callback(body: dict[str, Any]) -> Incoming:
    callback = _obj(body.get("callback"), "callback")
    user = _user_id(_obj(callback.get("user"), "callback.user").get("user_id"), "callback.user.user_id")
    callback_id = callback.get("callback_id")
    if not isinstance(callback_id, str) or not callback_id:
        raise BadUpdate("callback.callback_id is missing")
    payload = _text(callback.get("payload"), "callback.payload") or ""
    message = body.get("message") if isinstance(body.get("message"), dict) else {}
    recipient = message.get("recipient") if isinstance(message.get("recipient"), dict) else {}
    return Incoming(Update.button(payload), str(user), _chat(recipient.get("chat_id")), "c:" + callback_id,
                    callback_id)


def _started(body: dict[str, Any]) -> Incoming:
    user = _user_id(_obj(body.get("user"), "user").get("user_id"), "user.user_id")
    stamp = body.get("timestamp")
    if isinstance(stamp, bool) or not isinstance(stamp, int):
        raise BadUpdate("timestamp must be an integer")
    payload = body.get("payload")
    if payload is not None and not isinstance(payload, str):
        payload = str(payload)
    # The user is already part of every dialog key, so the timestamp alone tells deliveries apart.
    return Incoming(Update.started(payload), str(user), _chat(body.get("chat_id")), f"s:{stamp}")
