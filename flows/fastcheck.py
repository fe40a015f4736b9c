"""A quick yes/no on whether a raw document has no format problem at all, for the common, valid case.

`well_formed(doc)` is True only when `flows.schema.check_document(doc)` reports nothing: it accepts
exactly the documents the detailed checker accepts, using plain type checks and key-set comparisons
instead of building a path and a message for every field. Anything unusual (a subclass of a JSON
type, an exception) answers False, and the caller then runs the detailed checker, which stays the one
source of the problem details. The checks of single values live in `flows.fastvalues`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flows.checks import IDENTIFIER
from flows.fastvalues import (
    Add, data_ok, extras_ok, keyboard_ok, kinds_ok, number_ok, regex_ok, scalar_ok, text_ok, texts_ok, utf8_ok,
)
from flows.model import COMMANDS, DEFAULT_SESSION_TTL, FORMAT, INPUT_TYPES, OPS, TRIGGERS
from flows.schema import FLOW_ID, INPUT_OPTIONS, LIST_OPS, NO_VALUE_OPS, STATE_ID, TRIGGER_OPTIONS, URL

_TOP = frozenset(("format", "id", "title", "start", "settings", "commands", "states", "transitions", "layout"))
_SETTINGS = frozenset(("session_ttl", "reminder", "fallback", "start_on"))
_REMINDER = frozenset(("after", "text", "buttons"))
_COMMANDS = frozenset(COMMANDS)
_COMMAND = frozenset(("match", "reply"))
_STATE = frozenset(("id", "title", "final", "say", "input", "note"))
_MESSAGE = frozenset(("text", "buttons"))
_INPUT = {t: frozenset(("type", "save_as", "error", "max_attempts", *INPUT_OPTIONS.get(t, ())))
          for t in INPUT_TYPES}
_TRANSITION = {t: frozenset(("id", "from", "to", "on", "if", "set", "actions", *TRIGGER_OPTIONS.get(t, ())))
               for t in TRIGGERS}
_CONDITION = frozenset(("var", "op", "value"))
_CONDITION_NO_VALUE = frozenset(("var", "op"))
_WEBHOOK = frozenset(("type", "url"))
_CLEAR = frozenset(("type",))
_OPS = frozenset(OPS)
_START_ON = frozenset(("any", "command"))
_flow_id = FLOW_ID.fullmatch
_state_id = STATE_ID.fullmatch
_identifier = IDENTIFIER.fullmatch
_url = URL.fullmatch


def _settings(value: Any, add: Add) -> bool:
    if type(value) is not dict or not (_SETTINGS.issuperset(value) or extras_ok(value, _SETTINGS, add)):
        return False
    ttl = value.get("session_ttl", DEFAULT_SESSION_TTL)
    if not number_ok(ttl) or ttl < 1:
        return False
    if "fallback" in value and not text_ok(value["fallback"], add):
        return False
    if "start_on" in value and (type(value["start_on"]) is not str or value["start_on"] not in _START_ON):
        return False
    if "reminder" in value:
        reminder = value["reminder"]
        if type(reminder) is not dict or not (_REMINDER.issuperset(reminder) or extras_ok(reminder, _REMINDER, add)):
            return False
        after = reminder.get("after")
        if not number_ok(after) or after < 1 or after >= ttl or not text_ok(reminder.get("text"), add):
            return False
        if "buttons" in reminder and not keyboard_ok(reminder["buttons"], add):
            return False
    return True


def _commands(value: Any, add: Add) -> bool:
    if type(value) is not dict or not (_COMMANDS.issuperset(value) or extras_ok(value, _COMMANDS, add)):
        return False
    for name in COMMANDS:
        command = value.get(name)
        if command is None:
            continue  # absent or disabled
        if type(command) is not dict or not (_COMMAND.issuperset(command) or extras_ok(command, _COMMAND, add)):
            return False
        if "match" in command and not texts_ok(command["match"], add, False):
            return False
        if "reply" in command and not text_ok(command["reply"], add):
            return False
    return True


def _input(value: Any, add: Add) -> bool:
    if type(value) is not dict:
        return False
    itype = value.get("type")
    allowed = _INPUT.get(itype) if type(itype) is str else None
    if allowed is None or not (allowed.issuperset(value) or extras_ok(value, allowed, add)):
        return False
    if "save_as" in value:
        key = value["save_as"]
        if type(key) is not str or not _identifier(key):
            return False
    if "error" in value and not text_ok(value["error"], add):
        return False
    if "max_attempts" in value:
        attempts = value["max_attempts"]
        if type(attempts) is not int or attempts < 1:
            return False
    if itype not in INPUT_OPTIONS:
        return True  # a type without options
    for option in ("min_length", "max_length"):
        if option in value and (type(value[option]) is not int or value[option] < 0):
            return False
    for option in ("min", "max"):
        if option in value and not number_ok(value[option]):
            return False
    if itype == "choice" and not texts_ok(value.get("choices"), add, True):
        return False
    if itype == "regex" and not regex_ok(value.get("pattern"), add):
        return False
    return "kinds" not in value or kinds_ok(value["kinds"])


def _state(value: Any, add: Add) -> bool:
    if type(value) is not dict or not (_STATE.issuperset(value) or extras_ok(value, _STATE, add)):
        return False
    sid = value.get("id")
    if type(sid) is not str or not _state_id(sid):
        return False
    if "title" in value and not text_ok(value["title"], add):
        return False
    if "final" in value and type(value["final"]) is not bool:
        return False
    if "note" in value and not text_ok(value["note"], add):
        return False
    if "say" in value:
        say = value["say"]
        if type(say) is not list:
            return False
        for message in say:
            if type(message) is not dict or not (_MESSAGE.issuperset(message) or extras_ok(message, _MESSAGE, add)):
                return False
            text = message.get("text")
            if type(text) is not str:
                return False
            add(text)
            if "buttons" in message and not keyboard_ok(message["buttons"], add):
                return False
    return "input" not in value or _input(value["input"], add)


def _condition(value: Any, add: Add) -> bool:
    if type(value) is not dict:
        return False
    op = value.get("op")
    if type(op) is not str or op not in _OPS:
        return False
    var = value.get("var")
    if not text_ok(var, add) or not var.strip():
        return False
    if op in NO_VALUE_OPS:
        return _CONDITION_NO_VALUE.issuperset(value) or extras_ok(value, _CONDITION_NO_VALUE, add)
    if "value" not in value or not (_CONDITION.issuperset(value) or extras_ok(value, _CONDITION, add)):
        return False
    operand = value["value"]
    if op in LIST_OPS:
        if type(operand) is not list:
            return False
        for entry in operand:
            if not scalar_ok(entry, add):
                return False
        return True
    if op == "matches":
        return regex_ok(operand, add)
    return scalar_ok(operand, add)


def _assignments(value: Any, add: Add) -> bool:
    if type(value) is not dict:
        return False
    for key, template in value.items():
        if type(key) is not str:
            return False
        add(key)
        if key.startswith("x-"):
            if not data_ok(template, add):
                return False
        elif type(template) is not str or not _identifier(key):
            return False
        else:
            add(template)
    return True


def _action(value: Any, add: Add) -> bool:
    if type(value) is not dict:
        return False
    kind = value.get("type")
    if type(kind) is not str:
        return False
    if kind == "webhook":
        url = value.get("url")
        return ((_WEBHOOK.issuperset(value) or extras_ok(value, _WEBHOOK, add))
                and text_ok(url, add) and _url(url) is not None)
    return kind == "clear" and (_CLEAR.issuperset(value) or extras_ok(value, _CLEAR, add))


def _entries(value: Any, check: Callable[[Any, Add], bool], add: Add) -> bool:
    if type(value) is not list:
        return False
    for entry in value:
        if not check(entry, add):
            return False
    return True


def _transition(value: Any, add: Add) -> bool:
    if type(value) is not dict:
        return False
    on = value.get("on")
    allowed = _TRANSITION.get(on) if type(on) is str else None
    if allowed is None or not (allowed.issuperset(value) or extras_ok(value, allowed, add)):
        return False
    source, target = value.get("from"), value.get("to")
    if type(source) is not str or type(target) is not str:
        return False
    add(source)
    add(target)
    if "id" in value:
        tid = value["id"]
        if type(tid) is not str or not tid.strip():
            return False
        add(tid)
    if "set" in value and not _assignments(value["set"], add):
        return False
    if "if" in value and not _entries(value["if"], _condition, add):
        return False
    if "actions" in value and not _entries(value["actions"], _action, add):
        return False
    # `allowed` already keeps other triggers' options out: only this trigger's own are checked.
    if on == "button":
        return "payload" in value and text_ok(value["payload"], add)
    if on == "event":
        name = value.get("name")
        return text_ok(name, add) and bool(name.strip())
    if on == "timeout":
        after = value.get("after")
        return number_ok(after) and after >= 1
    if on == "attachment":
        return "kinds" not in value or kinds_ok(value["kinds"])
    if on == "text":
        if "match" not in value and "pattern" not in value:
            return False
        if "match" in value and not texts_ok(value["match"], add, True):
            return False
        return "pattern" not in value or regex_ok(value["pattern"], add)
    return True  # input, invalid, else: no options


def well_formed(doc: Any) -> bool:
    """True only when the detailed checker would find no problem in `doc` (False may still be fine)."""
    texts: list[str] = []
    try:
        return _document(doc, texts.append) and utf8_ok("".join(texts))
    except Exception:  # noqa: BLE001 - whatever went wrong, the detailed checker has the final word
        return False


def fine_elements(doc: Any) -> set[int]:
    """The ids of the states and transitions of `doc` in which the detailed checker finds nothing."""
    fine: set[int] = set()
    if type(doc) is not dict:
        return fine
    for field, check in (("states", _state), ("transitions", _transition)):
        entries = doc.get(field)
        if type(entries) is not list:
            continue
        for entry in entries:
            texts: list[str] = []
            try:
                if check(entry, texts.append) and utf8_ok("".join(texts)):
                    fine.add(id(entry))
            except Exception:  # noqa: BLE001 - the detailed checker looks at this one
                continue
    return fine


def _document(doc: Any, add: Add) -> bool:
    if type(doc) is not dict or not (_TOP.issuperset(doc) or extras_ok(doc, _TOP, add)):
        return False
    fmt, flow_id = doc.get("format"), doc.get("id")
    if type(fmt) is not str or fmt != FORMAT or type(flow_id) is not str or not _flow_id(flow_id):
        return False
    if "title" in doc and not text_ok(doc["title"], add):
        return False
    if "start" in doc and not text_ok(doc["start"], add):
        return False
    if "settings" in doc and not _settings(doc["settings"], add):
        return False
    if "commands" in doc and not _commands(doc["commands"], add):
        return False
    if "layout" in doc and (type(doc["layout"]) is not dict or not data_ok(doc["layout"], add)):
        return False
    if not _entries(doc.get("states"), _state, add):
        return False
    return "transitions" not in doc or _entries(doc["transitions"], _transition, add)
