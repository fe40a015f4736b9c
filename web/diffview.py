"""A semantic diff laid out for drawing: both documents' states and transitions, each marked added,
removed, changed or same, with the changed fields listed."""
from __future__ import annotations

import json
import re
from typing import Any

from flows.load import normalise
from web.i18n import N_
from web.i18n import gettext as _

# Document field -> the name the forms give it (`say[0].text` is "message 1").
FIELD_NAMES = {
    "title": N_("title"), "start": N_("start state"), "final": N_("final state"), "note": N_("notes"),
    "say": N_("messages"), "input": N_("input"), "input.type": N_("input type"), "input.save_as": N_("saved as"),
    "input.error": N_("error text"), "input.max_attempts": N_("max attempts"), "input.min": N_("minimum"),
    "input.max": N_("maximum"), "input.min_length": N_("min length"), "input.max_length": N_("max length"),
    "input.choices": N_("choices"), "input.pattern": N_("pattern"), "input.kinds": N_("attachment kinds"),
    "from": N_("from"), "to": N_("to"), "on": N_("trigger"), "payload": N_("button payload"),
    "match": N_("texts"), "pattern": N_("pattern"), "kinds": N_("attachment kinds"), "name": N_("event name"),
    "after": N_("idle seconds"), "if": N_("conditions"), "set": N_("set data"), "actions": N_("actions"),
    "session_ttl": N_("session lifetime"), "fallback": N_("fallback reply"), "start_on": N_("a dialog opens on"),
    "reminder": N_("reminder"), "reminder.after": N_("reminder delay"), "reminder.text": N_("reminder text"),
    "order": N_("order of transitions"),
}
MESSAGE = re.compile(r"^say\[(\d+)\](?:\.(text|buttons))?")
ITEM = re.compile(r"^(if|set|actions)\[(\d+)\]")


def field_name(field: str) -> str:
    """A document path as the person knows it from the forms."""
    if field in FIELD_NAMES:
        return _(FIELD_NAMES[field])
    message = MESSAGE.match(field)
    if message:
        n = int(message.group(1)) + 1
        return _("buttons of message %(n)s") % {"n": n} if message.group(2) == "buttons" else \
            _("message %(n)s") % {"n": n}
    item = ITEM.match(field)
    if item:
        return f"{_(FIELD_NAMES[item.group(1)])} {int(item.group(2)) + 1}"
    head = field.split(".")[0].split("[")[0]
    if field.startswith("input.") and head in FIELD_NAMES:
        return _(FIELD_NAMES["input"])
    if field.startswith("commands.") or head in ("cancel", "restart", "back", "help"):
        return _("command %(name)s") % {"name": field.removeprefix("commands.").split(".")[0]}
    return _(FIELD_NAMES[head]) if head in FIELD_NAMES else field


def _short(value: Any) -> str:
    if value is None or value == [] or value == {}:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def _fields(fields: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"field": field_name(f["field"]), "from": _short(f["from"]), "to": _short(f["to"])} for f in fields]


# What the page needs of a transition to label its edge as the editor does (static/js/editor/labels.js).
TRIGGER_FIELDS = ("on", "payload", "match", "pattern", "name", "after", "kinds", "if")


def _trigger(tr: dict[str, Any]) -> dict[str, Any]:
    return {key: tr[key] for key in TRIGGER_FIELDS if key in tr}


def _status(key: str, section: dict[str, Any]) -> str:
    if key in section["added"]:
        return "added"
    if key in section["removed"]:
        return "removed"
    if any(c["id"] == key for c in section["changed"]):
        return "changed"
    return "same"


def _ids(document: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    return {str(e.get("id")): e for e in document.get(name) or [] if isinstance(e, dict)}


def diff_graph(old: dict[str, Any], new: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """Nodes and edges of both documents (new first, then what was removed), each with its diff status."""
    old, new = normalise(old), normalise(new)
    old_states, new_states = _ids(old, "states"), _ids(new, "states")
    nodes = []
    for sid, state in {**old_states, **new_states}.items():
        nodes.append({"id": sid, "label": state.get("title") or sid, "status": _status(sid, result["states"]),
                      "final": bool(state.get("final"))})
    edges = []
    for tid, tr in {**_ids(old, "transitions"), **_ids(new, "transitions")}.items():
        if tr.get("from") in old_states or tr.get("from") in new_states:
            edges.append({"id": tid, "source": tr.get("from"), "target": tr.get("to"), "trigger": _trigger(tr),
                          "status": _status(tid, result["transitions"])})
    return {"nodes": nodes, "edges": edges, "start": new.get("start")}


SECTIONS = {"settings": N_("flow settings"), "commands": N_("global commands"), "other": N_("other fields")}


def change_lines(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Readable rows: what was added, removed, and each changed field with its old and new value."""
    rows: list[dict[str, Any]] = []
    for key in ("title", "start"):
        if result.get(key):
            rows.append({"kind": "changed", "what": _("flow %(field)s") % {"field": field_name(key)},
                         "fields": _fields([{"field": key, **result[key]}])})
    for section, name in (("states", N_("state %(id)s")), ("transitions", N_("transition %(id)s"))):
        part = result[section]
        rows += [{"kind": "added", "what": _(name) % {"id": key}, "fields": []} for key in part["added"]]
        rows += [{"kind": "removed", "what": _(name) % {"id": key}, "fields": []} for key in part["removed"]]
        rows += [{"kind": "changed", "what": _(name) % {"id": c["id"]}, "fields": _fields(c["fields"])}
                 for c in part["changed"]]
    if result["transitions"].get("order"):
        rows.append({"kind": "changed", "what": _("order of transitions"), "fields": [
            {"field": _("order"), "from": ", ".join(result["transitions"]["order"]["from"]),
             "to": ", ".join(result["transitions"]["order"]["to"])}]})
    for section in ("settings", "commands", "other"):
        if result.get(section):
            rows.append({"kind": "changed", "what": _(SECTIONS[section]), "fields": _fields(result[section])})
    return rows


KINDS = {"added": N_("added"), "removed": N_("removed"), "changed": N_("changed")}
