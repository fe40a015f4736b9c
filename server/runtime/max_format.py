"""Turn engine replies into MAX `POST /messages` bodies."""
from __future__ import annotations

from typing import Any

from flows.session import Reply

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


def message_body(reply: Reply) -> dict[str, Any]:
    """The JSON body of `POST /messages` for one reply: text plus its keyboard, if any."""
    body: dict[str, Any] = {"text": reply.text}
    attachment = keyboard(reply.buttons)
    if attachment is not None:
        body["attachments"] = [attachment]
    return body
