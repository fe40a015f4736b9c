"""The `botflow/v1` document, declared once: both the quick and the detailed check read `DOCUMENT`.

A new field, option or bound is one edit here. The words of the format (input types, triggers, ops)
live in `flows.model`; the numeric bounds in `flows.limits`.
"""
from __future__ import annotations

import json
import re
from typing import Any

from flows.checks import article, kind
from flows.limits import MAX_SECONDS
from flows.model import ATTACHMENT_KINDS, COMMANDS, DEFAULT_SESSION_TTL, FORMAT, INPUT_TYPES, OPS, TRIGGERS
from flows.shapes import (
    Assignments, Flag, Free, ListOf, Literal, Node, Number, Obj, Optional, PatternText, Shaped, Switch, Text, Word,
    owners,
)

FLOW_ID = re.compile(r"[a-z][a-z0-9_-]{0,63}")
STATE_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")
# A data key, the name inside a `{placeholder}`.
DATA_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A template's tokens: literal braces, or a placeholder naming a data key (anything else is literal text).
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(" + DATA_KEY.pattern + r")\}")
WEBHOOK_URL = re.compile(r"(?i:https?)://\S+")
LINK_URL = re.compile(r"(?i:https?|max)://\S+")
REQUESTS = ("contact", "location")

# Options only some input types / triggers take; anywhere else they are unknown fields.
INPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    "text": ("min_length", "max_length"), "number": ("min", "max"), "integer": ("min", "max"),
    "choice": ("choices",), "regex": ("pattern",), "attachment": ("kinds",),
}
TRIGGER_OPTIONS: dict[str, tuple[str, ...]] = {
    "text": ("match", "pattern"), "button": ("payload",), "attachment": ("kinds",),
    "event": ("name",), "timeout": ("after",),
}
NO_VALUE_OPS = ("set", "unset")
LIST_OPS = ("in", "not_in")


def _shown(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


# Values ------------------------------------------------------------------------------------------

TEXT = Text()
SECONDS = Number(1, MAX_SECONDS, unit=" seconds (a year)")
DATA_KEY_TEXT = Shaped(DATA_KEY, lambda v: f"{_shown(v)} is not a valid data key; use Latin letters, digits and _,"
                                           " starting with a letter or _ (e.g. phone_number)")
STATE_ID_TEXT = Shaped(STATE_ID, lambda v: f"state id {_shown(v)} is not valid; use 1-64 characters: a lowercase"
                                           " Latin letter first, then lowercase letters, digits or _"
                                           " (e.g. awaiting_phone)")
FLOW_ID_TEXT = Shaped(FLOW_ID, lambda v: f"flow id {_shown(v)} is not valid; use 1-64 characters: a lowercase Latin"
                                         " letter first, then lowercase letters, digits, _ or -")
def _wrong_format(value: Any) -> str:
    shown = _shown(value) if isinstance(value, str) else kind(value)
    return f'format must be "{FORMAT}", not {shown}; this loader reads {FORMAT} documents only'


FORMAT_TEXT = Shaped(re.compile(re.escape(FORMAT)), _wrong_format, other=_wrong_format)
KINDS_SENTENCE = (f"kinds must be a non-empty list of {', '.join(ATTACHMENT_KINDS)}; remove it to accept any"
                  " attachment")
KINDS = ListOf(Word(ATTACHMENT_KINDS, "attachment kind"), "attachment kinds", empty=KINDS_SENTENCE,
               message=KINDS_SENTENCE + ", not {kind}")
PATTERN = PatternText()


def texts(empty: str | None = None) -> ListOf:
    """A list of strings; `empty` is the problem of an empty one."""
    return ListOf(TEXT, "strings", empty=empty)


# Buttons and messages ----------------------------------------------------------------------------

def _button_kind(button: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    given = [key for key in ("payload", "url", "request") if key in button]
    if not given:
        return [(("payload",), 'a button needs "payload" (a callback button), "url" (a link button) or "request"'
                            ' ("contact" or "location")')]
    if len(given) > 1:
        both = "both" if len(given) == 2 else "all three"
        return [((), f'a button has one of "payload" (a callback button), "url" (a link button) or "request"'
                       f' (asks for a contact or location), not {both}; remove {"one" if both == "both" else "two"}')]
    return []


BUTTON = Obj("a button", {
    "text": TEXT, "payload": TEXT,
    "url": Shaped(LINK_URL, lambda v: f"{_shown(v)} is not a link a button can open; write an https://, http:// or"
                                      " max:// address"),
    "request": Word(REQUESTS, "request"),
}, required=("text",), rules=(_button_kind,))
KEYBOARD = ListOf(
    ListOf(BUTTON, "buttons", message="a button row must be a list of buttons, not {kind};"
                                      ' write [[{{"text": "Yes", "payload": "yes"}}]]'),
    "rows", message="buttons must be a list of rows, each a list of buttons, not {kind}")
MESSAGE = Obj("a message", {"text": TEXT, "buttons": KEYBOARD}, required=("text",))


# Settings and commands ---------------------------------------------------------------------------

def _reminder_first(settings: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    reminder = settings.get("reminder")
    ttl = settings.get("session_ttl", DEFAULT_SESSION_TTL)
    after = reminder.get("after") if isinstance(reminder, dict) else None
    if SECONDS.fine(after) and SECONDS.fine(ttl) and after >= ttl:
        return [(("reminder", "after"), f"the reminder ({after:g} s) must come before the dialog expires (session_ttl"
                                   f" {ttl:g} s); make reminder.after smaller than session_ttl")]
    return []


REMINDER = Obj("the reminder", {"after": SECONDS, "text": TEXT, "buttons": KEYBOARD}, required=("after", "text"))
SETTINGS = Obj("settings", {
    "session_ttl": SECONDS, "reminder": REMINDER, "fallback": TEXT, "start_on": Word(("any", "command"), "start_on"),
}, rules=(_reminder_first,))
COMMAND = Optional(Obj("a command", {"match": texts(), "reply": TEXT},
                       message='a command must be an object like {{"match": ["/help"], "reply": "..."}}, or null'
                               " to disable it, not {kind}"))
COMMANDS_OBJ = Obj("commands", {name: COMMAND for name in COMMANDS})


# States ------------------------------------------------------------------------------------------

_INPUT_COMMON: dict[str, Node | None] = {
    "type": None, "save_as": DATA_KEY_TEXT, "error": TEXT, "max_attempts": Number(1, whole=True),
}
_INPUT_VALUES: dict[str, Node] = {
    "min_length": Number(0, whole=True), "max_length": Number(0, whole=True), "min": Number(), "max": Number(),
    "choices": texts("a choice input must offer at least one choice"), "pattern": PATTERN, "kinds": KINDS,
}
_INPUT_REQUIRED = {"choice": ("choices",), "regex": ("pattern",)}
_ANY_OPTION = {key: None for options in INPUT_OPTIONS.values() for key in options}


def _input_foreign(key: str) -> str:
    return owners(key, INPUT_OPTIONS, "input")


INPUT = Switch("type", {
    itype: Obj(f"{article(itype)} input",
               {**_INPUT_COMMON, **{key: _INPUT_VALUES[key] for key in INPUT_OPTIONS.get(itype, ())}},
               required=_INPUT_REQUIRED.get(itype, ()), foreign=_input_foreign)
    for itype in INPUT_TYPES
}, base=Obj("input", {**_INPUT_COMMON, **_ANY_OPTION}), what="input type",
    missing=f'input needs the field "type", one of {", ".join(INPUT_TYPES)}')
STATE = Obj("a state", {
    "id": STATE_ID_TEXT, "title": TEXT, "final": Flag(), "say": ListOf(MESSAGE, "messages"), "input": INPUT,
    "note": TEXT,
}, required=("id",))


# Transitions -------------------------------------------------------------------------------------

def _condition(op: str) -> Obj:
    fields: dict[str, Node | None] = {"var": Text(nonempty=True), "op": None}
    required: tuple[str, ...] = ("var", "op")
    if op not in NO_VALUE_OPS:
        required += ("value",)
        if op in LIST_OPS:
            fields["value"] = ListOf(Literal(), "values", message=f'"{op}" compares against a list; write the value'
                                                                  ' as a list, e.g. ["a", "b"], not {kind}')
        else:
            fields["value"] = PATTERN if op == "matches" else Literal()
    return Obj(f"{article(_shown(op))} condition", fields, required=required)


CONDITION = Switch("op", {op: _condition(op) for op in OPS},
                   base=Obj("a condition", {"var": Text(nonempty=True), "op": None, "value": None},
                            required=("var", "op"),
                            message='a condition must be an object like {{"var": "age", "op": "ge", "value": 18}},'
                                    " not {kind}"),
                   what="op", missing='a condition needs the field "op"')
ACTION = Switch("type", {
    "webhook": Obj("a webhook action", {
        "type": None,
        "url": Shaped(WEBHOOK_URL, lambda v: f"{_shown(v)} is not an http(s) URL; write it like"
                                             " https://crm.example/leads"),
    }, required=("url",)),
    "clear": Obj("a clear action", {"type": None}),
}, base=Obj("an action", {"type": None, "url": None}), what="action type",
    missing='an action needs the field "type": webhook or clear')

_TRANSITION_COMMON: dict[str, Node | None] = {
    "id": Text(nonempty=True), "from": TEXT, "to": TEXT, "on": None,
    "if": ListOf(CONDITION, "conditions"),
    "set": Assignments(DATA_KEY_TEXT, 'set must be an object mapping data keys to texts, e.g. {{"status": "paid"}},'
                                      " not {kind}"),
    "actions": ListOf(ACTION, "actions"),
}
_TRIGGER_VALUES: dict[str, Node] = {
    "match": texts("match must list at least one text; or remove it and use pattern"), "pattern": PATTERN,
    "payload": TEXT, "kinds": KINDS, "name": Text(nonempty=True), "after": SECONDS,
}
_TRIGGER_REQUIRED = {"button": ("payload",), "event": ("name",), "timeout": ("after",)}
_ANY_TRIGGER_OPTION = {key: None for options in TRIGGER_OPTIONS.values() for key in options}


def _text_needs_words(transition: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    if "match" in transition or "pattern" in transition:
        return []
    return [(("match",), 'a text transition needs "match" (a list of texts) or "pattern" (a regular expression)')]


def _trigger_foreign(key: str) -> str:
    return owners(key, TRIGGER_OPTIONS, "trigger")


TRANSITION = Switch("on", {
    on: Obj(f"{article(on)} transition",
            {**_TRANSITION_COMMON, **{key: _TRIGGER_VALUES[key] for key in TRIGGER_OPTIONS.get(on, ())}},
            required=("from", "to", "on") + _TRIGGER_REQUIRED.get(on, ()), foreign=_trigger_foreign,
            rules=(_text_needs_words,) if on == "text" else ())
    for on in TRIGGERS
}, base=Obj("a transition", {**_TRANSITION_COMMON, **_ANY_TRIGGER_OPTION}, required=("from", "to", "on")),
    what="trigger", missing=f'a transition needs the field "on", the trigger: one of {", ".join(TRIGGERS)}')


# The document ------------------------------------------------------------------------------------

DOCUMENT = Obj("the flow document", {
    "format": FORMAT_TEXT, "id": FLOW_ID_TEXT, "title": TEXT, "start": TEXT, "settings": SETTINGS,
    "commands": COMMANDS_OBJ, "states": ListOf(STATE, "states", settled=True),
    "transitions": ListOf(TRANSITION, "transitions", settled=True),
    "layout": Free('layout must be an object like {{"state_id": {{"x": 0, "y": 0}}}}, not {kind}'),
}, required={"format": f'the document needs "format": "{FORMAT}" at the top; add it', "id": None, "states": None})
# The list elements the detailed check may skip once the quick one passed them.
ELEMENTS = (("states", STATE), ("transitions", TRANSITION))

__all__ = ["DATA_KEY", "DOCUMENT", "ELEMENTS", "FLOW_ID", "INPUT_OPTIONS", "PLACEHOLDER", "STATE_ID",
           "TRIGGER_OPTIONS"]
