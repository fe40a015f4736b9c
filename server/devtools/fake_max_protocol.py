"""The fake MAX API's protocol shapes: the limits it enforces (400 proto.payload) and the objects it returns."""
from __future__ import annotations

import re
import time
from typing import Any

MAX_TEXT = 4000
BUTTON_TYPES = frozenset({"callback", "link", "message", "request_contact", "request_geo_location",
                          "open_app", "clipboard"})
FORMATS = frozenset({"markdown", "html"})
SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{5,256}$")


class Invalid(Exception):
    """A request the API refuses with 400 {"code": "proto.payload", "message": ...}."""


def int_param(query: dict[str, str], name: str, *, required: bool = False,
              low: int | None = None, high: int | None = None) -> int | None:
    """An integer query parameter, range-checked."""
    raw = query.get(name)
    if raw is None or raw == "" or raw == "null":
        if required:
            raise Invalid(f"Parameter `{name}` is required")
        return None
    try:
        value = int(raw)
    except ValueError:
        raise Invalid(f"Parameter `{name}` must be an integer") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise Invalid(f"Parameter `{name}` must be between {low} and {high}")
    return value


def check_button(button: Any, where: str) -> None:
    """One inline keyboard button: known type, text 1–128, payload/url as its type needs."""
    if not isinstance(button, dict):
        raise Invalid(f"{where}: button must be an object")
    kind = button.get("type")
    if kind not in BUTTON_TYPES:
        raise Invalid(f"{where}.type: unknown button type {kind!r}")
    text = button.get("text")
    if not isinstance(text, str) or not 1 <= len(text) <= 128:
        raise Invalid(f"{where}.text: must be 1 to 128 characters")
    if kind in ("callback", "clipboard"):
        payload = button.get("payload")
        if not isinstance(payload, str):
            raise Invalid(f"{where}.payload: required for a {kind} button")
        if len(payload) > 1024:
            raise Invalid(f"{where}.payload: must be at most 1024 characters")
    elif kind == "link":
        url = button.get("url")
        if not isinstance(url, str) or not url or len(url) > 2048:
            raise Invalid(f"{where}.url: required, at most 2048 characters")


def check_attachment(attachment: Any, where: str) -> None:
    """One attachment: an object with a type; an inline keyboard is checked button by button."""
    if not isinstance(attachment, dict) or not isinstance(attachment.get("type"), str):
        raise Invalid(f"{where}: attachment must be an object with a `type`")
    if attachment["type"] != "inline_keyboard":
        return
    payload = attachment.get("payload")
    rows = payload.get("buttons") if isinstance(payload, dict) else None
    if not isinstance(rows, list) or not rows:
        raise Invalid(f"{where}.payload.buttons: must be a non-empty array of rows")
    for r, row in enumerate(rows):
        if not isinstance(row, list):
            raise Invalid(f"{where}.payload.buttons[{r}]: must be an array")
        for b, button in enumerate(row):
            check_button(button, f"{where}.payload.buttons[{r}][{b}]")


def check_message(body: Any, where: str = "body") -> dict[str, Any]:
    """A NewMessageBody: text at most 4000 characters, attachments a list, known format."""
    if not isinstance(body, dict):
        raise Invalid(f"{where}: must be a JSON object")
    text = body.get("text")
    if text is not None and not isinstance(text, str):
        raise Invalid(f"{where}.text: must be a string")
    if text is not None and len(text) > MAX_TEXT:
        raise Invalid(f"{where}.text: must be at most {MAX_TEXT} characters, got {len(text)}")
    attachments = body.get("attachments")
    if attachments is not None:
        if not isinstance(attachments, list):
            raise Invalid(f"{where}.attachments: must be an array")
        for i, attachment in enumerate(attachments):
            check_attachment(attachment, f"{where}.attachments[{i}]")
    if not text and not attachments:
        raise Invalid(f"{where}: a message needs text or attachments")
    fmt = body.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise Invalid(f"{where}.format: must be markdown or html")
    notify = body.get("notify")
    if notify is not None and not isinstance(notify, bool):
        raise Invalid(f"{where}.notify: must be a boolean")
    return body


def check_answer(body: Any) -> dict[str, Any]:
    """A CallbackAnswer: {"message": NewMessageBody|null, "notification": string|null}."""
    if not isinstance(body, dict):
        raise Invalid("body: must be a JSON object")
    if body.get("message") is not None:
        check_message(body["message"], "body.message")
    notification = body.get("notification")
    if notification is not None and not isinstance(notification, str):
        raise Invalid("body.notification: must be a string")
    return body


def check_subscription(body: Any) -> dict[str, Any]:
    """A SubscriptionRequestBody: https url, secret 5–256 of [A-Za-z0-9_-], update_types a list."""
    if not isinstance(body, dict):
        raise Invalid("body: must be a JSON object")
    url = body.get("url")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise Invalid("body.url: must start with https://")
    secret = body.get("secret")
    if secret is not None and (not isinstance(secret, str) or not SECRET_RE.match(secret)):
        raise Invalid("body.secret: must be 5 to 256 characters of A-Z, a-z, 0-9, _ and -")
    types = body.get("update_types")
    if types is not None and (not isinstance(types, list) or not all(isinstance(t, str) for t in types)):
        raise Invalid("body.update_types: must be an array of strings")
    return body


def bot_info(key: str) -> dict[str, Any]:
    """GET /me for the bot whose token hashes to `key` (stable per token)."""
    return {"user_id": int(key[:8], 16) % 1_000_000_000, "first_name": "Fake bot",
            "username": f"fake_{key[:6]}_bot", "is_bot": True,
            "last_activity_time": int(time.time() * 1000), "description": None, "commands": None}


def sender(key: str) -> dict[str, Any]:
    """The bot as the sender of its messages."""
    me = bot_info(key)
    return {"user_id": me["user_id"], "first_name": me["first_name"], "username": me["username"], "is_bot": True}


def sent_message(me: dict[str, Any], number: int, chat_id: int | None, user_id: int | None,
                 body: dict[str, Any]) -> dict[str, Any]:
    """The Message object POST /messages answers with: sender (`sender(key)`), recipient, generated mid and
    seq, body."""
    return {
        "sender": me,
        "recipient": {"chat_id": chat_id if chat_id is not None else user_id, "chat_type": "dialog",
                      "user_id": user_id},
        "timestamp": int(time.time() * 1000),
        "body": {"mid": f"mid.{number:032x}", "seq": number, "text": body.get("text"),
                 "attachments": body.get("attachments") or []}}
