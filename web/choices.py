"""What the form selects offer, named for a person (the values stay the document's own words)."""
from __future__ import annotations

from web.i18n import N_
from web.i18n import gettext as _

INPUT_TYPE_NAMES = {
    "text": N_("text"), "phone": N_("phone number"), "email": N_("email address"), "number": N_("number"),
    "integer": N_("whole number"), "choice": N_("one of the choices"), "regex": N_("text matching a pattern"),
    "date": N_("date"), "attachment": N_("attachment"), "contact": N_("contact"), "location": N_("location"),
    "any": N_("any message"),
}
# The "Save as" field's example for each input type: a data name that fits what the input collects.
SAVE_AS_EXAMPLES = {
    "text": "name", "phone": "phone", "email": "email", "number": "amount", "integer": "age", "choice": "choice",
    "regex": "code", "date": "birth_date", "attachment": "document", "contact": "contact", "location": "address",
    "any": "answer",
}
TRIGGER_NAMES = {
    "input": N_("valid input"), "text": N_("text"), "button": N_("button press"), "attachment": N_("attachment"),
    "event": N_("external event"), "timeout": N_("idle time"), "invalid": N_("invalid input"),
    "else": N_("anything else"),
}
OP_NAMES = {
    "eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥", "in": N_("one of"), "not_in": N_("none of"),
    "set": N_("is set"), "unset": N_("is not set"), "matches": N_("matches"),
}
KIND_NAMES = {
    "image": N_("image"), "video": N_("video"), "audio": N_("audio"), "file": N_("file"), "sticker": N_("sticker"),
    "share": N_("shared link"), "contact": N_("contact"), "location": N_("location"),
}
ACTION_NAMES = {"webhook": N_("call a webhook"), "clear": N_("clear the data")}
MODE_NAMES = {"default": N_("default"), "custom": N_("custom"), "off": N_("off")}


def options(values: tuple[str, ...], names: dict[str, str]) -> list[tuple[str, str]]:
    """(value, translated name) pairs for a select."""
    return [(value, _(names.get(value, value))) for value in values]
