"""A semantic diff laid out for drawing: both documents' states and transitions, each marked added,
removed, changed or same, with the changed fields listed."""
from __future__ import annotations

import json
import re
from typing import Any

from flows.load import normalise
from web.i18n import N_
from web.i18n import gettext as _
from web.i18n import language_name

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
MESSAGE = re.compile(r"^say\[(\d+)\](?:\.(text|buttons|format|image|upload))?")
# A message's parts besides its text, as the state form names them.
MESSAGE_PARTS = {"buttons": N_("buttons of message %(n)s"), "format": N_("format of message %(n)s"),
                 "image": N_("picture of message %(n)s"), "upload": N_("picture of message %(n)s")}
ITEM = re.compile(r"^(if|set|actions)\[(\d+)\]")


def field_name(field: str) -> str:
    """A document path as the person knows it from the forms."""
    if field in FIELD_NAMES:
        return _(FIELD_NAMES[field])
    message = MESSAGE.match(field)
    if message:
        n = int(message.group(1)) + 1
        return _(MESSAGE_PARTS.get(message.group(2) or "", N_("message %(n)s"))) % {"n": n}
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


# Fields whose values are state ids: shown by the states' titles.
STATE_FIELDS = ("from", "to", "start")


def _fields(fields: list[dict[str, Any]], names: "Names | None" = None) -> list[dict[str, str]]:
    def shown(field: str, value: Any) -> str:
        if names is not None and field in STATE_FIELDS and isinstance(value, str) and value:
            return names.state(value)
        return _short(value)
    return [{"field": field_name(f["field"]), "from": shown(f["field"], f["from"]), "to": shown(f["field"], f["to"])}
            for f in fields]


class Names:
    """States by their titles (the newer document's title wins), transitions by the states they join; an id
    only where there is no title."""

    def __init__(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        old, new = normalise(old), normalise(new)
        self.titles: dict[str, str] = {}
        self.ends: dict[str, tuple[str, str]] = {}
        for document in (old, new):
            for sid, state in _ids(document, "states").items():
                title = state.get("title")
                if isinstance(title, str) and title.strip():
                    self.titles[sid] = title
            for tid, tr in _ids(document, "transitions").items():
                self.ends[tid] = (str(tr.get("from") or ""), str(tr.get("to") or ""))

    def state(self, sid: str) -> str:
        return f"«{self.titles[sid]}»" if sid in self.titles else sid

    def transition(self, tid: str) -> str:
        if tid not in self.ends:
            return tid
        source, target = self.ends[tid]
        return f"{self.state(source)} → {self.state(target)}"


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


def change_lines(result: dict[str, Any], old: dict[str, Any] | None = None,
                 new: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Readable rows: what was added, removed, and each changed field with its old and new value; states and
    transitions named by titles (the id goes on hover) when the two documents are given."""
    names = Names(old or {}, new or {})
    rows: list[dict[str, Any]] = []
    for key in ("title", "start"):
        if result.get(key):
            rows.append({"kind": "changed", "what": _("flow %(field)s") % {"field": field_name(key)},
                         "fields": _fields([{"field": key, **result[key]}], names)})
    for section, name in (("states", N_("state %(id)s")), ("transitions", N_("transition %(id)s"))):
        part = result[section]
        said = names.state if section == "states" else names.transition
        rows += [{"kind": "added", "what": _(name) % {"id": said(key)}, "id": key, "fields": []}
                 for key in part["added"]]
        rows += [{"kind": "removed", "what": _(name) % {"id": said(key)}, "id": key, "fields": []}
                 for key in part["removed"]]
        rows += [{"kind": "changed", "what": _(name) % {"id": said(c["id"])}, "id": c["id"],
                  "fields": _fields(c["fields"], names)} for c in part["changed"]]
    if result["transitions"].get("order"):
        rows.append({"kind": "changed", "what": _("order of transitions"), "fields": [
            {"field": _("order"), "from": ", ".join(names.transition(t) for t in result["transitions"]["order"]["from"]),
             "to": ", ".join(names.transition(t) for t in result["transitions"]["order"]["to"])}]})
    for section in ("settings", "commands", "other"):
        if result.get(section):
            rows.append({"kind": "changed", "what": _(SECTIONS[section]), "fields": _fields(result[section])})
    by_language: dict[str, list[dict[str, Any]]] = {}
    for change in result.get("translations") or []:
        by_language.setdefault(change["language"], []).append(change)
    for code, changes in by_language.items():
        rows.append({"kind": "changed", "what": _("translation into %(lang)s") % {"lang": language_name(code)},
                     "fields": [{"field": text_place(c["path"], names.titles.get(c.get("state") or "", c.get("state"))), "from": _short(c["from"] or None),
                                 "to": _short(c["to"] or None)} for c in changes]})
    return rows


TEXT_PATH = re.compile(r"^states\[(\d+)\]\.(.+)$")


def text_place(path: str, state: str | None) -> str:
    """A text's path as the forms name it: `«ask_name» · message 1`, `fallback reply`, `command cancel`."""
    found = TEXT_PATH.match(path)
    if found:
        return f"«{state or int(found.group(1)) + 1}» · {field_name(found.group(2))}"
    return field_name(path.removeprefix("settings."))


KINDS = {"added": N_("added"), "removed": N_("removed"), "changed": N_("changed")}
