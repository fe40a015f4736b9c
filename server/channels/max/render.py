"""Turn engine replies into MAX bodies: `POST /messages` (NewMessageBody) and `POST /answers` (CallbackAnswer)."""
from __future__ import annotations

from typing import Any

from flows.dialog import Reply

# Limits of the MAX Bot API (NewMessageBody, Button).
MAX_TEXT = 4000
MAX_BUTTON_TEXT = 128
MAX_CALLBACK_PAYLOAD = 1024
# Buttons that ask the user's client for something instead of sending a payload.
REQUEST_TYPES = {"contact": "request_contact", "location": "request_geo_location"}


def button(spec: dict[str, str]) -> dict[str, str]:
    """One MAX button from a neutral {"text", "payload"}, {"text", "url"} or {"text", "request"} dict."""
    # A rendered template may grow past the limit; a cut label beats a message MAX refuses outright.
    text = spec.get("text") or ""
    if len(text) > MAX_BUTTON_TEXT:
        text = text[: MAX_BUTTON_TEXT - 1] + "…"
    request = REQUEST_TYPES.get(spec.get("request") or "")
    if request:
        return {"type": request, "text": text}
    url = spec.get("url")
    if url:
        return {"type": "link", "text": text, "url": url}
    return {"type": "callback", "text": text, "payload": spec.get("payload") or ""}


def keyboard(rows: list[list[dict[str, str]]]) -> dict[str, Any] | None:
    """The inline_keyboard attachment for these rows, or None when there is no button."""
    buttons = [[button(spec) for spec in row] for row in rows if row]
    if not buttons:
        return None
    return {"type": "inline_keyboard", "payload": {"buttons": buttons}}


def picture(reply: Reply, token: str | None = None) -> dict[str, Any] | None:
    """The image attachment of a reply: an uploaded file by its token, else the link MAX fetches; or None."""
    if token is not None:
        return {"type": "image", "payload": {"token": token}}
    if reply.image:
        return {"type": "image", "payload": {"url": reply.image}}
    return None


def text_body(text: str, attachments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A NewMessageBody: the schema requires `text`, `attachments` and `link` (the official clients send
    a null link and an empty list when there is none)."""
    return {"text": text, "attachments": attachments or [], "link": None}


def message_body(reply: Reply, token: str | None = None) -> dict[str, Any]:
    """The JSON body of `POST /messages` for one reply: text in its markup, its picture (`token`: the bot's
    token for an uploaded one), then its keyboard."""
    body = text_body(reply.text, [a for a in (picture(reply, token), keyboard(reply.buttons)) if a is not None])
    if reply.format is not None:
        body["format"] = reply.format
    return body


def answer_body(notification: str | None = None, message: dict[str, Any] | None = None) -> dict[str, Any]:
    """A CallbackAnswer with only the fields that are set (MAX takes a null field as one to apply)."""
    body: dict[str, Any] = {}
    if message is not None:
        body["message"] = message
    if notification is not None:
        body["notification"] = notification
    return body


# Attachment types MAX takes back by the token it gave them, so an edited message keeps its picture.
_BY_TOKEN = ("image", "video", "audio", "file")
CHOSEN = "✓ "  # marks the pressed button's text where its keyboard was


def pressed_body(pressed: dict[str, Any]) -> dict[str, Any]:
    """The pressed message again without its keyboard; for mode "replace" the pressed button's text is
    written where the buttons were."""
    text = pressed.get("text") or ""
    label = pressed.get("label")
    if pressed.get("mode") == "replace" and label:
        tail = "\n\n" + CHOSEN + label
        text = (text[: MAX_TEXT - len(tail)] + tail) if text else CHOSEN + label
    kept = []
    for attachment in pressed.get("attachments") or ():
        payload = attachment.get("payload")
        token = payload.get("token") if isinstance(payload, dict) else None
        if attachment.get("type") in _BY_TOKEN and isinstance(token, str) and token:
            kept.append({"type": attachment["type"], "payload": {"token": token}})
    return text_body(text[:MAX_TEXT], kept)
