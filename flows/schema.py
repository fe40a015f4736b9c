"""The `botflow/v1` table as checks: every way a raw document can break the format."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from flows.checks import Checker, article, Report, is_number, item, join, json_data_problems, kind
from flows.model import ATTACHMENT_KINDS, COMMANDS, DEFAULT_SESSION_TTL, FORMAT, INPUT_TYPES, OPS, TRIGGERS

FLOW_ID = re.compile(r"[a-z][a-z0-9_-]{0,63}")
STATE_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")
URL = re.compile(r"https?://\S+")

# Options that only some input types / triggers take; anywhere else they are unknown fields.
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


def _owners(field: str, table: dict[str, tuple[str, ...]], noun: str) -> str:
    owners = [name for name, options in table.items() if field in options]
    if not owners:
        return ""
    return f'; "{field}" belongs to {" and ".join(owners)} {noun}s only'


class FlowChecker(Checker):
    """Checks a whole raw document against the format; problems land in `report`.

    States and transitions whose id is in `fine` are known to be free of problems and are skipped.
    """

    def __init__(self, report: Report, fine: set[int] | frozenset[int] = frozenset()) -> None:
        super().__init__(report)
        self.fine = fine

    def document(self, doc: Any) -> None:
        """Check everything, collecting every problem."""
        json_data_problems(doc, self.report, self.fine)
        self.fields(doc, "", {
            "format": self.format, "id": self.flow_id, "title": self.string, "start": self.string,
            "settings": self.settings, "commands": self.commands, "states": self.states,
            "transitions": self.transitions, "layout": self.layout,
        }, what="the flow document", required=("id", "states"))
        if isinstance(doc, dict) and "format" not in doc:
            self.add("format", f'the document needs "format": "{FORMAT}" at the top; add it')

    def format(self, value: Any, path: str) -> None:
        if value != FORMAT:
            shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else kind(value)
            self.add(path, f'format must be "{FORMAT}", not {shown}; this loader reads {FORMAT} documents only')

    def flow_id(self, value: Any, path: str) -> None:
        if self.string(value, path) and not FLOW_ID.fullmatch(value):
            self.add(path, f"flow id {json.dumps(value, ensure_ascii=False)} is not valid; use 1-64 characters:"
                           " a lowercase Latin letter first, then lowercase letters, digits, _ or -")

    def state_id(self, value: Any, path: str) -> None:
        if self.string(value, path) and not STATE_ID.fullmatch(value):
            self.add(path, f"state id {json.dumps(value, ensure_ascii=False)} is not valid; use 1-64 characters:"
                           " a lowercase Latin letter first, then lowercase letters, digits or _"
                           " (e.g. awaiting_phone)")

    def layout(self, value: Any, path: str) -> None:
        # Editor positions are free-form: only the container's type is checked.
        if not isinstance(value, dict):
            self.add(path, f'layout must be an object like {{"state_id": {{"x": 0, "y": 0}}}}, not {kind(value)}')

    # settings ---------------------------------------------------------------------------------

    def settings(self, value: Any, path: str) -> None:
        if not self.fields(value, path, {
            "session_ttl": lambda v, p: self.number(v, p, minimum=1), "reminder": self.reminder,
            "fallback": self.string, "start_on": self.start_on,
        }, what="settings"):
            return
        reminder = value.get("reminder")
        ttl = value.get("session_ttl", DEFAULT_SESSION_TTL)
        after = reminder.get("after") if isinstance(reminder, dict) else None
        if is_number(after) and is_number(ttl) and after >= ttl:
            self.add(join(join(path, "reminder"), "after"), f"the reminder ({after:g} s) must come before the dialog"
                     f" expires (session_ttl {ttl:g} s); make reminder.after smaller than session_ttl")

    def start_on(self, value: Any, path: str) -> None:
        self.choice(value, path, ("any", "command"), what="start_on")

    def reminder(self, value: Any, path: str) -> None:
        self.fields(value, path, {
            "after": lambda v, p: self.number(v, p, minimum=1), "text": self.string, "buttons": self.keyboard,
        }, what="the reminder", required=("after", "text"))

    # commands ---------------------------------------------------------------------------------

    def commands(self, value: Any, path: str) -> None:
        spec = {name: self.command for name in COMMANDS}
        self.fields(value, path, spec, what="commands")

    def command(self, value: Any, path: str) -> None:
        if value is None:
            return  # disabled
        if not isinstance(value, dict):
            self.add(path, f'a command must be an object like {{"match": ["/help"], "reply": "..."}}, or null'
                           f" to disable it, not {kind(value)}")
            return
        self.fields(value, path, {"match": self.strings, "reply": self.string}, what="a command")

    # states -----------------------------------------------------------------------------------

    def states(self, value: Any, path: str) -> None:
        self.listing(value, path, self.unsettled(self.state), what="states")

    def unsettled(self, check: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
        """`check`, skipping the elements already known to be fine."""
        fine = self.fine
        return lambda value, path: None if id(value) in fine else check(value, path)

    def state(self, value: Any, path: str) -> None:
        self.fields(value, path, {
            "id": self.state_id, "title": self.string, "final": self.boolean,
            "say": lambda v, p: self.listing(v, p, self.message, what="messages"),
            "input": self.input, "note": self.string,
        }, what="a state", required=("id",))

    def message(self, value: Any, path: str) -> None:
        self.fields(value, path, {"text": self.string, "buttons": self.keyboard},
                    what="a message", required=("text",))

    def keyboard(self, value: Any, path: str) -> None:
        if not isinstance(value, list):
            self.add(path, f'buttons must be a list of rows, each a list of buttons, not {kind(value)}')
            return
        for r, row in enumerate(value):
            if not isinstance(row, list):
                self.add(item(path, r), f"a button row must be a list of buttons, not {kind(row)};"
                                        ' write [[{"text": "Yes", "payload": "yes"}]]')
                continue
            for b, button in enumerate(row):
                self.button(button, f"{item(path, r)}[{b}]")

    def button(self, value: Any, path: str) -> None:
        if not self.fields(value, path, {"text": self.string, "payload": self.string, "url": self.string},
                           what="a button", required=("text",)):
            return
        if "payload" in value and "url" in value:
            self.add(path, 'a button has either "payload" (a callback button) or "url" (a link button),'
                           " not both; remove one")
        elif "payload" not in value and "url" not in value:
            self.add(join(path, "payload"), 'a button needs "payload" (a callback button) or "url"'
                                            " (a link button)")

    def input(self, value: Any, path: str) -> None:
        common: dict[str, Any] = {
            "type": None, "save_as": self.identifier, "error": self.string,
            "max_attempts": lambda v, p: self.integer(v, p, minimum=1),
        }
        if not isinstance(value, dict):
            self.fields(value, path, common, what="input")
            return
        if "type" not in value:
            self.add(join(path, "type"), f'input needs the field "type", one of {", ".join(INPUT_TYPES)}')
            common = {**common, **{k: None for opts in INPUT_OPTIONS.values() for k in opts}}
            self.fields(value, path, common, what="input")
            return
        itype = value["type"]
        if not self.choice(itype, join(path, "type"), INPUT_TYPES, what="input type"):
            # Without a known type we cannot tell which options belong; check only the common fields.
            common = {**common, **{k: None for opts in INPUT_OPTIONS.values() for k in opts}}
            self.fields(value, path, common, what="input")
            return
        options: dict[str, Any] = {
            "min_length": lambda v, p: self.integer(v, p, minimum=0),
            "max_length": lambda v, p: self.integer(v, p, minimum=0),
            "min": self.number, "max": self.number,
            "choices": lambda v, p: self.strings(v, p, nonempty="a choice input must offer at least one choice"),
            "pattern": self.regex, "kinds": self.kinds,
        }
        spec = {**common, **{k: options[k] for k in INPUT_OPTIONS.get(itype, ())}}
        required = {"choice": ("choices",), "regex": ("pattern",)}.get(itype, ())
        self.fields(value, path, spec, what=f"{article(itype)} input", required=required,
                    foreign=lambda k: _owners(k, INPUT_OPTIONS, "input"))

    def kinds(self, value: Any, path: str) -> None:
        if not isinstance(value, list) or not value:
            self.add(path, f"kinds must be a non-empty list of {', '.join(ATTACHMENT_KINDS)}; remove it to"
                           f" accept any attachment" + ("" if isinstance(value, list) else f", not {kind(value)}"))
            return
        for i, entry in enumerate(value):
            self.choice(entry, item(path, i), ATTACHMENT_KINDS, what="attachment kind")

    # transitions ------------------------------------------------------------------------------

    def transitions(self, value: Any, path: str) -> None:
        self.listing(value, path, self.unsettled(self.transition), what="transitions")

    def transition(self, value: Any, path: str) -> None:
        common: dict[str, Any] = {
            "id": self.transition_id, "from": self.string, "to": self.string,
            "on": None, "if": lambda v, p: self.listing(v, p, self.condition, what="conditions"),
            "set": self.assignments, "actions": lambda v, p: self.listing(v, p, self.action, what="actions"),
        }
        required = ("from", "to", "on")
        all_options = {k: None for opts in TRIGGER_OPTIONS.values() for k in opts}
        if not isinstance(value, dict) or "on" not in value:
            if isinstance(value, dict):
                self.add(join(path, "on"), f'a transition needs the field "on", the trigger: one of'
                                           f" {', '.join(TRIGGERS)}")
            self.fields(value, path, {**common, **all_options}, what="a transition", required=required)
            return
        trigger = value["on"]
        if not self.choice(trigger, join(path, "on"), TRIGGERS, what="trigger"):
            self.fields(value, path, {**common, **all_options}, what="a transition", required=required)
            return
        options: dict[str, Any] = {
            "match": lambda v, p: self.strings(
                v, p, nonempty="match must list at least one text; or remove it and use pattern"),
            "pattern": self.regex,
            "payload": self.string, "kinds": self.kinds,
            "name": lambda v, p: self.string(v, p, nonempty=True),
            "after": lambda v, p: self.number(v, p, minimum=1),
        }
        spec = {**common, **{k: options[k] for k in TRIGGER_OPTIONS.get(trigger, ())}}
        needs = {"button": ("payload",), "event": ("name",), "timeout": ("after",)}.get(trigger, ())
        self.fields(value, path, spec, what=f"{article(trigger)} transition", required=required + needs,
                    foreign=lambda k: _owners(k, TRIGGER_OPTIONS, "trigger"))
        if trigger == "text" and "match" not in value and "pattern" not in value:
            self.add(join(path, "match"), 'a text transition needs "match" (a list of texts) or "pattern"'
                                          " (a regular expression)")

    def transition_id(self, value: Any, path: str) -> None:
        if self.string(value, path) and not value.strip():
            self.add(path, 'a transition id must not be empty; remove "id" to have one generated')

    def condition(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.add(path, f'a condition must be an object like {{"var": "age", "op": "ge", "value": 18}},'
                           f" not {kind(value)}")
            return
        op = value.get("op")
        known_op = "op" in value and self.choice(op, join(path, "op"), OPS, what="op")
        spec: dict[str, Any] = {"var": lambda v, p: self.string(v, p, nonempty=True), "op": None}
        if not known_op or op not in NO_VALUE_OPS:
            spec["value"] = (lambda v, p: self.value(v, p, op)) if known_op else None
        required = ("var", "op") + (("value",) if known_op and op not in NO_VALUE_OPS else ())
        self.fields(value, path, spec, what=f'{article(json.dumps(op))} condition' if known_op else "a condition",
                    required=required)

    def value(self, value: Any, path: str, op: str) -> None:
        if op in LIST_OPS:
            if not isinstance(value, list):
                self.add(path, f'"{op}" compares against a list; write the value as a list, e.g. ["a", "b"],'
                               f" not {kind(value)}")
                return
            for i, entry in enumerate(value):
                self.literal(entry, item(path, i))
        elif op == "matches":
            self.regex(value, path)
        else:
            self.literal(value, path)

    def literal(self, value: Any, path: str) -> None:
        if isinstance(value, (dict, list)):
            self.add(path, f"must be a single value (a string, number, true/false or null), not {kind(value)}")

    def assignments(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.add(path, f'set must be an object mapping data keys to texts, e.g. {{"status": "paid"}},'
                           f" not {kind(value)}")
            return
        for key, template in value.items():
            if isinstance(key, str) and key.startswith("x-"):
                continue
            sub = join(path, key)
            if isinstance(key, str) and not self.identifier(key, sub):
                continue
            if not isinstance(template, str):
                self.add(sub, f"set values are text templates and must be strings, not {kind(template)};"
                              f" quote it (e.g. \"18\")")

    def action(self, value: Any, path: str) -> None:
        if not isinstance(value, dict) or "type" not in value:
            if isinstance(value, dict):
                self.add(join(path, "type"), 'an action needs the field "type": webhook or clear')
            self.fields(value, path, {"type": None, "url": None}, what="an action")
            return
        if not self.choice(value["type"], join(path, "type"), ("webhook", "clear"), what="action type"):
            self.fields(value, path, {"type": None, "url": None}, what="an action")
            return
        if value["type"] == "webhook":
            self.fields(value, path, {"type": None, "url": self.url}, what="a webhook action", required=("url",))
        else:
            self.fields(value, path, {"type": None}, what="a clear action")

    def url(self, value: Any, path: str) -> None:
        if self.string(value, path) and not URL.fullmatch(value):
            self.add(path, f"{json.dumps(value, ensure_ascii=False)} is not an http(s) URL; write it like"
                           " https://crm.example/leads")


def check_document(doc: Any, *, quick: bool = True) -> list[dict[str, str]]:
    """Every format problem of a raw document, one detail each (empty when it loads).

    With `quick`, states and transitions the quick check passes are not walked again: in a large
    draft with one mistake, only the broken element pays for paths and messages.
    """
    from flows.fastcheck import fine_elements  # the quick check reads this module's tables

    report = Report()
    FlowChecker(report, fine_elements(doc) if quick else frozenset()).document(doc)
    return report.details
