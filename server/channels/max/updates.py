"""MAX updates → the runtime's `Incoming`: the dialog's owner, where replies go, the redelivery key.

Every JSON object is read without refusal: MAX redelivers a refused update for hours and then drops the
bot's subscription, so a shape the runtime cannot use is `Ignored` with a reason (a metric label), never
an error. Only private dialogs reach a flow; group chats and channels are ignored (reason "group").
"""
from __future__ import annotations

from typing import Any

from flows.dialog import Update
from server.channels.base import USER_ID_MAX, BadUpdate, Ignored, Incoming

# Update types that reach a dialog; every other type is accepted with 200 and ignored.
HANDLED = ("message_created", "message_callback", "bot_started")

# Why a delivery was not used: the label values of botflow_updates_ignored_total.
UNUSED_TYPE = Ignored("unused_type")  # a type flows do not use (message_edited, bot_added, an unknown one)
NO_MESSAGE = Ignored("no_message")  # message_created without a message (a native voice message)
NO_SENDER = Ignored("no_sender")  # nobody to answer: a channel post, a press or start without a user
FROM_BOT = Ignored("from_bot")  # a bot's message (ours echoed, or another bot's)
GROUP = Ignored("group")  # a group chat or a channel: a flow talks to one person in a private dialog
UNREADABLE = Ignored("unreadable")  # a field the schema types otherwise (an id that is not a number, ...)
REASONS = tuple(sorted(r.reason for r in (UNUSED_TYPE, NO_MESSAGE, NO_SENDER, FROM_BOT, GROUP, UNREADABLE)))

CHAT_ID_LIMIT = 2 ** 63
LOCALE_LENGTH = 35  # a BCP 47 tag's practical bound (RFC 5646 §4.4.1)
MAX_ID_LENGTH = 1024  # message and callback ids are keys of the duplicate marks: MAX's are a few dozen characters
# Attachment types that are the message's own content (a keyboard is the bot's, echoed back).
_NOT_CONTENT = frozenset({"inline_keyboard", "reply_keyboard"})


class _Unreadable(Exception):
    """A field the runtime needs has a type the schema does not give it."""


def _object(value: Any) -> dict[str, Any] | None:
    return value if type(value) is dict else None


def _user_id(user: Any) -> int | None:
    """A user object's id; None when there is no user; _Unreadable for an id that is not one."""
    if type(user) is not dict:
        return None
    value = user.get("user_id")
    if value is None:
        return None
    if type(value) is not int or not 0 < value <= USER_ID_MAX:
        raise _Unreadable
    return value


def _chat(value: Any) -> int | None:
    """A chat id, a signed 64-bit integer; None for anything else."""
    if type(value) is int and -CHAT_ID_LIMIT <= value < CHAT_ID_LIMIT:
        return value
    return None


def _key(value: Any) -> str | None:
    """A message or callback id usable as a duplicate mark; None when there is none."""
    if type(value) is str and 0 < len(value) <= MAX_ID_LENGTH:
        return value
    if value is None or value == "":
        return None
    raise _Unreadable


def _text(value: Any) -> str | None:
    return value if type(value) is str else None


def _dialog(message: dict[str, Any] | None) -> tuple[bool, int | None]:
    """(whether the message is in a private dialog, that dialog's chat id) from its recipient."""
    recipient = _object(message.get("recipient")) if message is not None else None
    if recipient is None:
        return message is None, None  # a press on a message since deleted: the presser's dialog
    return recipient.get("chat_type") == "dialog", _chat(recipient.get("chat_id"))


def parse_update(raw: Any) -> Incoming | Ignored:
    """The runtime's update of a MAX delivery, or why a well-formed one is not used."""
    if type(raw) is not dict:
        raise BadUpdate("it is not a JSON object, as every MAX update is")
    body = raw
    kind = body.get("update_type")
    try:
        if kind == "message_created":
            incoming = _message(body)
        elif kind == "message_callback":
            incoming = _callback(body)
        elif kind == "bot_started":
            incoming = _started(body)
        else:
            return UNUSED_TYPE if type(kind) is str else UNREADABLE
    except _Unreadable:
        return UNREADABLE
    if type(incoming) is Incoming:
        locale = body.get("user_locale")
        if type(locale) is str and 0 < len(locale) <= LOCALE_LENGTH:
            incoming.update.locale = locale
    return incoming


def _content(message: dict[str, Any], content: dict[str, Any] | None) -> Update:
    """The message's text and attachments; a forward counts as an attachment of type "forward" (no
    input takes it as text), and a message with nothing the runtime can read as an empty one."""
    attachments: list[dict[str, Any]] = []
    text = None
    if content is not None:
        text = _text(content.get("text"))
        found = content.get("attachments")
        if type(found) is list:
            attachments = [a for a in found if type(a) is dict and a.get("type") not in _NOT_CONTENT]
    link = _object(message.get("link"))
    if link is not None and link.get("type") == "forward":
        attachments.append({"type": "forward"})
    return Update.message(text, attachments)


def _message(body: dict[str, Any]) -> Incoming | Ignored:
    message = _object(body.get("message"))
    if message is None:
        return NO_MESSAGE
    dialog, chat = _dialog(message)
    if not dialog:  # a channel post (no sender) counts here too: what the page calls messages from groups
        return GROUP
    sender = _object(message.get("sender"))
    if sender is None:
        return NO_SENDER
    if sender.get("is_bot") is True:
        return FROM_BOT
    user = _user_id(sender)
    if user is None:
        return NO_SENDER
    content = _object(message.get("body"))
    mid = _key(content.get("mid")) if content is not None else None
    if mid is None:  # a forward without a body of its own: the message's time tells deliveries apart
        stamp = message.get("timestamp", body.get("timestamp"))
        if type(stamp) is not int:
            raise _Unreadable
        dedupe = f"t:{stamp}"
    else:
        dedupe = "m:" + mid
    return Incoming(_content(message, content), str(user), chat, dedupe)


def _callback(body: dict[str, Any]) -> Incoming | Ignored:
    callback = _object(body.get("callback"))
    if callback is None:
        return NO_SENDER
    user = _user_id(callback.get("user"))
    if user is None:
        return NO_SENDER
    callback_id = _key(callback.get("callback_id"))
    if callback_id is None:
        raise _Unreadable
    message = _object(body.get("message"))
    dialog, chat = _dialog(message)
    if not dialog:
        return GROUP
    payload = _text(callback.get("payload")) or ""
    return Incoming(Update.button(payload), str(user), chat, "c:" + callback_id, callback_id,
                    pressed=_pressed(message, payload))


def _pressed(message: dict[str, Any] | None, payload: str) -> dict[str, Any] | None:
    """What a press's answer needs to edit the pressed message: its text, the pressed button's label, and
    its attachments that are not the keyboard (None when the message is gone)."""
    content = _object(message.get("body")) if message is not None else None
    if content is None:
        return None
    label, kept = None, []
    found = content.get("attachments")
    for attachment in found if type(found) is list else ():
        if type(attachment) is not dict:
            continue
        if attachment.get("type") == "inline_keyboard":
            label = label or _label(attachment, payload)
        else:
            kept.append(attachment)
    return {"text": _text(content.get("text")), "label": label, "attachments": kept}


def _label(keyboard: dict[str, Any], payload: str) -> str | None:
    """The text of the keyboard's callback button carrying `payload`."""
    rows = (_object(keyboard.get("payload")) or {}).get("buttons")
    for row in rows if type(rows) is list else ():
        for button in row if type(row) is list else ():
            if type(button) is dict and button.get("payload") == payload and type(button.get("text")) is str:
                return button["text"]
    return None


def _started(body: dict[str, Any]) -> Incoming | Ignored:
    user = _user_id(body.get("user"))
    if user is None:
        return NO_SENDER
    stamp = body.get("timestamp")
    if type(stamp) is not int:
        raise _Unreadable
    payload = _text(body.get("payload"))  # a deep link's text, or none
    # The user is already part of every dialog key, so the timestamp alone tells deliveries apart.
    return Incoming(Update.started(payload), str(user), _chat(body.get("chat_id")), f"s:{stamp}")
