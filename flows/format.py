"""The `botflow/v1` document, declared once: both the quick and the detailed check read `DOCUMENT`.

A new field, option or bound is one edit here. The words of the format (input types, triggers, ops)
live in `flows.model`; the numeric bounds in `flows.limits`.
"""
from __future__ import annotations

import json
import re
from typing import Any

from flows.checks import article, kind
from flows.languages import LANGUAGE_CODE, language_problems
from flows.limits import MAX_SECONDS
from flows.markup import FORMATS, PICTURE_URL, html_problem
from flows.said import Said
from flows.model import AFTER_PRESS, ATTACHMENT_KINDS, COMMANDS, DEFAULT_SESSION_TTL, FORMAT, INPUT_TYPES, OPS, TRIGGERS
from flows.keyed_shapes import Assignments, Translated, owners
from flows.shapes import (
    Flag, Free, ListOf, Literal, Node, Number, Obj, Optional, PatternText, Shaped, Switch, Text, Word,
)

ID_MAX = 64  # characters of a flow or state id; the designer's id field takes its length and pattern from here
# `\-` inside the class: the browser compiles a field's pattern with the `v` flag, where a bare `-` is an error.
FLOW_ID = re.compile(rf"[a-z][a-z0-9_\-]{{0,{ID_MAX - 1}}}")
STATE_ID = re.compile(rf"[a-z][a-z0-9_]{{0,{ID_MAX - 1}}}")
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
# A text the bot sends: a string, or with `languages` an object of strings by language code.
SENT = Translated(TEXT, LANGUAGE_CODE, lambda value: not isinstance(value, dict), "a string")
LANGUAGE = Shaped(LANGUAGE_CODE, lambda v: f"{_shown(v)} is not a language code; use 2-3 lowercase Latin letters"
                                           " (ru, en, tt)")
LANGUAGES = ListOf(LANGUAGE, "language codes", empty='languages must list at least one code, the default first,'
                                                      ' e.g. ["ru", "en"]; or remove it')
SECONDS = Number(1, MAX_SECONDS, unit=" seconds (a year)")
DATA_KEY_TEXT = Shaped(DATA_KEY, lambda v: Said(f"{_shown(v)} is not a valid data key; use Latin letters, digits and"
                                                " _, starting with a letter or _ (e.g. phone_number)",
                                                "bad_data_key", key=v))
STATE_ID_TEXT = Shaped(STATE_ID, lambda v: Said(f"state id {_shown(v)} is not valid; use 1-64 characters: a lowercase"
                                                " Latin letter first, then lowercase letters, digits or _"
                                                " (e.g. awaiting_phone)", "bad_state_id", id=v))
FLOW_ID_TEXT = Shaped(FLOW_ID, lambda v: Said(f"flow id {_shown(v)} is not valid; use 1-64 characters: a lowercase"
                                              " Latin letter first, then lowercase letters, digits, _ or -",
                                              "bad_flow_id", id=v))
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
    "text": SENT, "payload": TEXT,
    "url": Shaped(LINK_URL, lambda v: f"{_shown(v)} is not a link a button can open; write an https://, http:// or"
                                      " max:// address"),
    "request": Word(REQUESTS, "request"),
}, required=("text",), rules=(_button_kind,))
KEYBOARD = ListOf(
    ListOf(BUTTON, "buttons", message="a button row must be a list of buttons, not {kind};"
                                      ' write [[{{"text": "Yes", "payload": "yes"}}]]'),
    "rows", message="buttons must be a list of rows, each a list of buttons, not {kind}")


def _markup_fits(message: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """Html MAX would not show as written, and two pictures on one message, are load errors."""
    found: list[tuple[tuple[str, ...], str]] = []
    text = message.get("text")
    if message.get("format") == "html":
        # Every language's text is sent with the message's format.
        written: list[tuple[tuple[str, ...], Any]] = [(("text",), text)] if isinstance(text, str) else [
            (("text", code), each) for code, each in text.items() if isinstance(code, str) and not code.startswith("x-")
        ] if isinstance(text, dict) else []
        for where, each in written:
            problem = html_problem(each) if isinstance(each, str) else None
            if problem:
                found.append((where, problem.prefixed("the html text cannot be shown: ")))
    if "image" in message and "upload" in message:
        found.append((("upload",), 'a message carries one picture: "image" (a link) or "upload" (an uploaded'
                                   " file), not both; remove one"))
    return found


MESSAGE = Obj("a message", {
    "text": SENT, "buttons": KEYBOARD, "format": Word(FORMATS, "format"),
    "image": Shaped(PICTURE_URL, lambda v: Said(f"{_shown(v)} is not a picture MAX can fetch; write an https://"
                                                " address", "bad_picture_url", url=v)),
    "upload": Text(nonempty=True),
}, required=("text",), rules=(_markup_fits,))


# Settings and commands ---------------------------------------------------------------------------

def _reminder_first(settings: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    reminder = settings.get("reminder")
    ttl = settings.get("session_ttl", DEFAULT_SESSION_TTL)
    after = reminder.get("after") if isinstance(reminder, dict) else None
    if SECONDS.fine(after) and SECONDS.fine(ttl) and after >= ttl:
        return [(("reminder", "after"), Said(f"the reminder ({after:g} s) must come before the dialog expires"
                                             f" (session_ttl {ttl:g} s); make reminder.after smaller than"
                                             " session_ttl", "reminder_after_expiry", after=f"{after:g}",
                                             ttl=f"{ttl:g}"))]
    return []


REMINDER = Obj("the reminder", {"after": SECONDS, "text": SENT, "buttons": KEYBOARD}, required=("after", "text"))
SETTINGS = Obj("settings", {
    "session_ttl": SECONDS, "reminder": REMINDER, "fallback": SENT, "start_on": Word(("any", "command"), "start_on"),
    "lost_place": SENT,
}, rules=(_reminder_first,))
COMMAND = Optional(Obj("a command", {"match": texts(), "reply": SENT},
                       message='a command must be an object like {{"match": ["/help"], "reply": "..."}}, or null'
                               " to disable it, not {kind}"))
COMMANDS_OBJ = Obj("commands", {name: COMMAND for name in COMMANDS})


# States ------------------------------------------------------------------------------------------

_INPUT_COMMON: dict[str, Node | None] = {
    "type": None, "save_as": DATA_KEY_TEXT, "error": SENT, "max_attempts": Number(1, whole=True),
}
_INPUT_VALUES: dict[str, Node] = {
    "min_length": Number(0, whole=True), "max_length": Number(0, whole=True), "min": Number(), "max": Number(),
    "choices": Translated(texts("a choice input must offer at least one choice"), LANGUAGE_CODE,
                          lambda value: not isinstance(value, dict), "a list of strings"),
    "pattern": PATTERN, "kinds": KINDS,
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
    "note": TEXT, "after_press": Word(AFTER_PRESS, "after_press"),
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
    "actions": ListOf(ACTION, "actions"), "language": LANGUAGE,
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
    "format": FORMAT_TEXT, "id": FLOW_ID_TEXT, "title": TEXT, "start": TEXT, "languages": LANGUAGES,
    "settings": SETTINGS,
    "commands": COMMANDS_OBJ, "states": ListOf(STATE, "states", settled=True),
    "transitions": ListOf(TRANSITION, "transitions", settled=True),
    "layout": Free('layout must be an object like {{"state_id": {{"x": 0, "y": 0}}}}, not {kind}'),
}, required={"format": f'the document needs "format": "{FORMAT}" at the top; add it', "id": None, "states": None},
    rules=(language_problems,))
# The list elements the detailed check may skip once the quick one passed them.
ELEMENTS = (("states", STATE), ("transitions", TRANSITION))

__all__ = ["DATA_KEY", "DOCUMENT", "ELEMENTS", "FLOW_ID", "ID_MAX", "INPUT_OPTIONS", "PLACEHOLDER", "STATE_ID",
           "TRIGGER_OPTIONS"]
