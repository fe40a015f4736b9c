"""The fake MAX API's protocol: bodies checked against the official schema (400 proto.payload), the objects it returns."""
from __future__ import annotations

import time
from typing import Any

from server.channels.max.fake.schema import problems, validator
from server.channels.max.urls import webhook_url_problem


# The schema's definitions the calls' bodies are checked against.
CHECKED = ("NewMessageBody", "CallbackAnswer", "SubscriptionRequestBody")


def prepare() -> None:
    """Read the schema and build the validators now, before any call arrives.

    Built on the first call they took 145 ms of CPU (the 115 KB YAML read, then the validator), 0.3-0.8 s
    on a loaded host: every call arriving meanwhile was stamped with one receive time, so a bot's first
    second at the fake held 37-44 calls that had left the replicas 41 ms apart (MAX's 30/s "broken" by
    the fake's own pause, with 429s after it).
    """
    for name in CHECKED:
        validator(name)


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


def _valid(definition: str, body: Any, where: str) -> dict[str, Any]:
    """`body` when the official schema's `definition` takes it; else Invalid naming the first problem."""
    if not isinstance(body, dict):
        raise Invalid(f"{where}: must be a JSON object")
    found = problems(definition, body)
    if found:
        raise Invalid(f"{where} is not a valid {definition}: {found[0]}")
    return body


def _pictures(body: dict[str, Any], where: str) -> None:
    """MAX takes a picture by exactly one of `url` or `token` (the schema lists both as optional)."""
    for i, attachment in enumerate(body.get("attachments") or ()):
        if attachment.get("type") != "image":
            continue
        picture = attachment.get("payload")
        given = [key for key in ("url", "token") if isinstance(picture, dict) and picture.get(key)]
        if len(given) != 1 or not isinstance(picture[given[0]], str):
            raise Invalid(f"{where}.attachments[{i}].payload: an image needs exactly one of `url` or `token`")


def check_message(body: Any, where: str = "body") -> dict[str, Any]:
    """A NewMessageBody as the schema has it; MAX also refuses one with neither text nor attachments."""
    _valid("NewMessageBody", body, where)
    _pictures(body, where)
    if not body.get("text") and not body.get("attachments"):
        raise Invalid(f"{where}: a message needs text or attachments")
    return body


def check_answer(body: Any) -> dict[str, Any]:
    """A CallbackAnswer as the schema has it, with no field sent as null (MAX would apply a null message)."""
    _valid("CallbackAnswer", body, "body")
    nulls = [name for name, value in body.items() if value is None]
    if nulls:
        raise Invalid(f"body.{nulls[0]}: send only the fields you mean, never null")
    if body.get("message") is not None:
        check_message(body["message"], "body.message")
    return body


def check_subscription(body: Any) -> dict[str, Any]:
    """A SubscriptionRequestBody as the schema has it, at a URL MAX accepts."""
    _valid("SubscriptionRequestBody", body, "body")
    why = webhook_url_problem(body["url"])
    if why:
        raise Invalid(f"body.url: {why}")
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
