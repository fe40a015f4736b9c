"""Updates as real MAX sends them, every shape the runtime must take: `SHAPES[name](user)` builds one.

The fake queues them for long polling (`FakeMax.emit`, `POST /_fake/emit {"shape", "user"}`), so a local
`botflow poll` run sees the odd ones too: a voice message without a message, a forward without a body, a
channel post, a group chat, partial users, deleted pressed messages and the update types flows do not use.
"""
from __future__ import annotations

import time
from typing import Any, Callable

Json = dict[str, Any]
BOT_USER = 277639678
KEYBOARD = {"type": "inline_keyboard", "payload": {"buttons": [[{"type": "callback", "text": "Да", "payload": "yes"}]]}}


def _now() -> int:
    return int(time.time() * 1000)


def _user(user: int, **extra: Any) -> Json:
    return {"user_id": user, "first_name": "Иван", "last_name": None, "username": None, "is_bot": False,
            "last_activity_time": _now(), **extra}


def _message(user: int, text: str | None, *, chat_type: str = "dialog", chat_id: int | None = None,
             attachments: list[Json] | None = None, sender: Json | None | str = "user", **extra: Any) -> Json:
    stamp = _now()
    body = {"mid": f"mid.{stamp:016x}{user:016x}", "seq": stamp, "text": text, "attachments": attachments,
            "link": None}
    dialog = chat_type == "dialog"
    message = {"sender": _user(user) if sender == "user" else sender,
               "recipient": {"chat_id": chat_id if chat_id is not None else (user if dialog else -user),
                             "chat_type": chat_type, "user_id": BOT_USER if dialog else None},
               "timestamp": stamp, "body": body, **extra}
    return {"update_type": "message_created", "timestamp": stamp, "message": message, "user_locale": "ru"}


def text(user: int, words: str = "Привет") -> Json:
    """A text message in the user's private dialog."""
    return _message(user, words)


def voice_without_message(user: int) -> Json:
    """A native voice message as Bot API v2 delivers it: no message at all."""
    return {"update_type": "message_created", "timestamp": _now(), "user_locale": "ru"}


def forward_only(user: int) -> Json:
    """A message that only forwards another: its body is null, its link the forwarded one."""
    update = _message(user, None)
    update["message"]["body"] = None
    update["message"]["link"] = {"type": "forward", "sender": _user(user + 1), "chat_id": user + 1,
                                 "message": {"mid": "mid.forwarded", "seq": 1, "text": "Переслано",
                                             "attachments": None}}
    return update


def channel_post(user: int) -> Json:
    """A post in a channel: no sender, a negative chat id."""
    return _message(user, "Новости", chat_type="channel", sender=None)


def group_message(user: int) -> Json:
    """A message in a group chat the bot is in."""
    return _message(user, "Всем привет", chat_type="chat")


def partial_user(user: int) -> Json:
    """A sender with only some fields."""
    update = _message(user, "Привет")
    update["message"]["sender"] = {"user_id": user, "name": "Иван", "username": "ivan"}
    return update


def sticker(user: int) -> Json:
    """A sticker, no text."""
    return _message(user, None, attachments=[{"type": "sticker", "payload": {"code": "c0ffee"}, "width": 128}])


def voice_attachment(user: int) -> Json:
    """An audio attachment with its transcription."""
    return _message(user, None, attachments=[{"type": "audio", "payload": {"token": "a"}, "transcription": "да"}])


def file(user: int) -> Json:
    """A file with its name and size."""
    return _message(user, None, attachments=[{"type": "file", "payload": {"token": "f"}, "filename": "a.pdf",
                                              "size": 1024}])


def press(user: int, payload: str = "yes") -> Json:
    """A press on a callback button of the bot's message in the user's dialog."""
    stamp = _now()
    pressed = _message(user, "Согласны?", attachments=[KEYBOARD], sender={**_user(BOT_USER), "is_bot": True})
    return {"update_type": "message_callback", "timestamp": stamp, "user_locale": "ru",
            "callback": {"timestamp": stamp, "callback_id": f"cb.{stamp:x}.{user}", "payload": payload,
                         "user": _user(user)},
            "message": pressed["message"]}


def press_on_deleted(user: int, payload: str = "yes") -> Json:
    """A press whose message was deleted by the time the update was sent."""
    return {**press(user, payload), "message": None}


def started(user: int, payload: str | None = None) -> Json:
    """The user pressed Start, maybe through a deep link."""
    return {"update_type": "bot_started", "timestamp": _now(), "chat_id": user, "user": _user(user),
            "payload": payload, "user_locale": "ru"}


def bot_added(user: int) -> Json:
    """The bot added to a group chat (no user since November 2026)."""
    return {"update_type": "bot_added", "timestamp": _now(), "chat_id": -user, "is_channel": False}


def unknown_type(user: int) -> Json:
    """An update type MAX may add later."""
    return {"update_type": "poll_answered", "timestamp": _now(), "poll": {"id": 1}}


def _other(kind: str) -> Callable[[int], Json]:
    def build(user: int) -> Json:
        update = {"update_type": kind, "timestamp": _now(), "chat_id": user, "user": _user(user), "user_locale": "ru"}
        if kind == "dialog_muted":
            update["muted_until"] = _now() + 3_600_000
        return update
    build.__doc__ = f"A {kind} update of the user's dialog."
    return build


SHAPES: dict[str, Callable[..., Json]] = {
    "text": text, "voice_without_message": voice_without_message, "forward_only": forward_only,
    "channel_post": channel_post, "group_message": group_message, "partial_user": partial_user,
    "sticker": sticker, "voice_attachment": voice_attachment, "file": file, "press": press,
    "press_on_deleted": press_on_deleted, "started": started, "bot_added": bot_added,
    "unknown_type": unknown_type,
    **{kind: _other(kind) for kind in ("bot_stopped", "dialog_muted", "dialog_unmuted", "dialog_cleared",
                                       "dialog_removed")},
}
