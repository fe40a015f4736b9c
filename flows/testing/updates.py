"""The simulator's update objects ({"text"}, {"payload"}, {"idle"}, ...) as engine updates."""
from __future__ import annotations

import math
from typing import Any

from flows.dialog import Update

UPDATE_KINDS = ("text", "payload", "event", "attachment", "bot_started", "idle")
# Ten years: far beyond any session_ttl, small enough to stay an ordinary float of seconds.
MAX_IDLE = 10 * 365 * 24 * 3600.0


class BadUpdate(ValueError):
    """An update object that is not one of the simulator's shapes; `path` names the field."""

    def __init__(self, message: str, path: str = "update") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


# A MAX user's `user_locale` is at most a tag like "en-US"; longer is not a locale.
MAX_LOCALE = 35


def parse_update(raw: Any, path: str = "update") -> tuple[Update, float]:
    """An update object as an engine Update plus the seconds the clock advances first."""
    update, idle = _parse(raw, path)
    locale = raw.get("user_locale")
    if locale is not None:
        if not isinstance(locale, str) or not 1 <= len(locale) <= MAX_LOCALE or not locale.isascii():
            raise BadUpdate(f'{path}.user_locale must be the user\'s language as MAX sends it, such as "ru" or'
                            ' "en-US".', f"{path}.user_locale")
        update.locale = locale
    return update, idle


def _parse(raw: Any, path: str) -> tuple[Update, float]:
    if not isinstance(raw, dict):
        raise BadUpdate(f"{path} must be an object such as {{\"text\": \"hi\"}}.", path)
    keys = set(raw) - {"user_locale"}
    kinds = [k for k in UPDATE_KINDS if k in raw]  # user_locale may go with any of them
    if "event" in raw:
        kinds = ["event"]
    elif "attachment" in raw:
        kinds = ["attachment"]
    if len(kinds) != 1:
        raise BadUpdate(f"{path} must have exactly one of {', '.join(UPDATE_KINDS)}.", path)
    kind = kinds[0]
    allowed = {"event": {"event", "payload"}, "attachment": {"attachment", "text"}}.get(kind, {kind})
    if keys - allowed:
        extra = ", ".join(sorted(keys - allowed))
        raise BadUpdate(f"{path} has fields that do not belong to a {kind} update: {extra}.", path)
    value = raw[kind]
    if kind == "text":
        if not isinstance(value, str):
            raise BadUpdate(f"{path}.text must be a string.", f"{path}.text")
        return Update.message(value), 0.0
    if kind == "payload":
        if not isinstance(value, str):
            raise BadUpdate(f"{path}.payload must be a string (the button's payload).", f"{path}.payload")
        return Update.button(value), 0.0
    if kind == "event":
        payload = raw.get("payload") or {}
        if not isinstance(value, str) or not value:
            raise BadUpdate(f"{path}.event must be the event's name.", f"{path}.event")
        if not isinstance(payload, dict):
            raise BadUpdate(f"{path}.payload of an event must be an object.", f"{path}.payload")
        return Update.event(value, payload), 0.0
    if kind == "attachment":
        caption = raw.get("text")
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise BadUpdate(f'{path}.attachment must be an object with a "type", e.g. {{"type": "image", '
                            '"payload": {}}.', f"{path}.attachment")
        if caption is not None and not isinstance(caption, str):
            raise BadUpdate(f"{path}.text (the caption) must be a string.", f"{path}.text")
        return Update.message(caption, [value]), 0.0
    if kind == "bot_started":
        if value is not None and not isinstance(value, str):
            raise BadUpdate(f"{path}.bot_started must be the start payload: a string, \"\" or null.",
                            f"{path}.bot_started")
        return Update.started(value or None), 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= MAX_IDLE:
        raise BadUpdate(f"{path}.idle must be a number of seconds from 0 to {int(MAX_IDLE)}.", f"{path}.idle")
    return Update.tick(), float(value)


def shown(raw: dict[str, Any]) -> str:
    """An update object as a person reads it in a test report."""
    if "idle" in raw:
        return f"wait {raw['idle']} s"
    if "payload" in raw and "event" not in raw:
        return f"press [{raw['payload']}]"
    if "event" in raw:
        return f"event {raw['event']}"
    if "attachment" in raw:
        kind = raw["attachment"].get("type", "attachment") if isinstance(raw["attachment"], dict) else "?"
        return f"[{kind}]" + (f" {raw['text']}" if raw.get("text") else "")
    if "bot_started" in raw:
        return "bot started" + (f" ({raw['bot_started']})" if raw.get("bot_started") else "")
    return str(raw.get("text", ""))
