"""The transition form: endpoints, trigger kind with its fields, conditions, `set` and actions."""
from __future__ import annotations

import re
from typing import Any

from flows.model import ATTACHMENT_KINDS, OPS, TRIGGERS
from web import durations
from web.forms import Edit, Fields, deep, finish, parse_action, parse_literal, show_literal
from web.i18n import gettext as _

# The trigger's own fields; another trigger's field would be an unknown field.
TRIGGER_FIELDS: dict[str, tuple[str, ...]] = {
    "button": ("payload",),
    "text": ("match", "pattern"),
    "attachment": ("kinds",),
    "event": ("name",),
    "timeout": ("after",),
}
LIST_OPS = ("in", "not_in")
NO_VALUE_OPS = ("set", "unset")
ACTION_TYPES = ("webhook", "clear")
SET_PATH = re.compile(r"^set\.(.+)$")


def transition_values(tr: dict[str, Any]) -> dict[str, Any]:
    """What the form shows for a stored transition."""
    return {
        "id": tr.get("id", ""),
        "from": tr.get("from", ""),
        "to": tr.get("to", ""),
        "on": tr.get("on", ""),
        "payload": tr.get("payload", ""),
        "match": "\n".join(tr.get("match") or []),
        "pattern": tr.get("pattern", ""),
        "kinds": list(tr.get("kinds") or []),
        "name": tr.get("name", ""),
        "after": durations.shown(tr.get("after")),
        "if": [{"var": c.get("var", ""), "op": c.get("op", "eq"),
                "value": "" if "value" not in c else show_literal(c["value"])} for c in tr.get("if") or []],
        "set": [{"key": k, "value": v} for k, v in (tr.get("set") or {}).items()],
        "actions": [{"type": a.get("type", "webhook"), "url": a.get("url", "")} for a in tr.get("actions") or []],
        "language": tr.get("language", ""),
    }


def read_values(f: Fields) -> dict[str, Any]:
    """The posted form in the shape of transition_values()."""
    return {
        "id": f.text("id").strip(),
        "language": f.text("language"),
        "from": f.text("from"),
        "to": f.text("to"),
        "on": f.text("on"),
        "payload": f.text("payload"),
        "match": f.text("match"),
        "pattern": f.text("pattern"),
        "kinds": f.all("kinds"),
        "name": f.text("name").strip(),
        "after": durations.posted(f, "after"),
        "if": [{"var": f.text(f"if[{i}].var").strip(), "op": f.text(f"if[{i}].op", "eq"),
                "value": f.text(f"if[{i}].value")} for i in f.indices("if")],
        "set": [{"key": f.text(f"set[{i}].key").strip(), "value": f.text(f"set[{i}].value")}
                for i in f.indices("set")],
        "actions": [{"type": f.text(f"actions[{i}].type", "webhook"), "url": f.text(f"actions[{i}].url").strip()}
                    for i in f.indices("actions")],
    }


def apply_action(values: dict[str, Any], action: str, errors: dict[str, str]) -> str | None:
    """Add or remove a condition, assignment or action row; "up"/"down" are returned for the caller."""
    # Removing a row that is not there (a stale or forged button) records an error next to that list.
    name, n = parse_action(action)
    rows = {"condition": ("if", {"var": "", "op": "eq", "value": ""}),
            "set": ("set", {"key": "", "value": ""}),
            "action": ("actions", {"type": "webhook", "url": ""})}
    verb, _sep, what = name.partition("_")
    if what in rows:
        key, blank = rows[what]
        if verb == "add":
            values[key].append(dict(blank))
        elif verb == "remove" and n and n[0] < len(values[key]):
            values[key].pop(n[0])
        elif verb == "remove":
            errors[key] = _("That row is not in the form any more; reload the panel to see the current rows.")
        return None
    return name if name in ("up", "down") else None


def anchors(values: dict[str, Any]) -> list[str]:
    names = ["id", "from", "to", "on", "payload", "match", "pattern", "kinds", "name", "after", "if", "set", "actions",
             "language"]
    names += [f"if[{i}]" for i in range(len(values["if"]))]
    names += [f"if[{i}].{k}" for i in range(len(values["if"])) for k in ("var", "op", "value")]
    names += [f"set[{i}]" for i in range(len(values["set"]))]
    names += [f"actions[{i}]" for i in range(len(values["actions"]))]
    names += [f"actions[{i}].url" for i in range(len(values["actions"]))]
    return names


def build_transition(values: dict[str, Any], original: dict[str, Any], f: Fields) -> dict[str, Any]:
    """The transition object the values describe; `x-` keys of the original are kept."""
    tr: dict[str, Any] = {k: v for k, v in original.items() if k.startswith("x-")}
    tr.update({"id": values["id"], "from": values["from"], "to": values["to"], "on": values["on"]})
    if values["on"] not in TRIGGERS:
        f.errors["on"] = _("Choose a trigger from the list.")
    _trigger_fields(tr, values, f)
    conditions = _conditions(values, f)
    if conditions:
        tr["if"] = conditions
    assignments = _assignments(values, f)
    if assignments:
        tr["set"] = assignments
    actions = _actions(values, f)
    if actions:
        tr["actions"] = actions
    # The form shows the language switch only for a flow with languages; without the field the switch stays.
    language = f.text("language") if "language" in f.data else original.get("language")
    if language:
        tr["language"] = language
    return tr


def _trigger_fields(tr: dict[str, Any], values: dict[str, Any], f: Fields) -> None:
    """The fields the chosen trigger takes (payload, match and pattern, kinds, name, after), into `tr`."""
    own = TRIGGER_FIELDS.get(values["on"], ())
    if "payload" in own:
        tr["payload"] = values["payload"]
        if not values["payload"]:
            f.errors["payload"] = _("Enter the payload of the button this transition answers.")
    if "match" in own:
        match = [line.strip() for line in values["match"].splitlines() if line.strip()]
        if match:
            tr["match"] = match
        if values["pattern"]:
            tr["pattern"] = values["pattern"]
        if not match and not values["pattern"]:
            f.errors["match"] = _("Enter the texts to match (one per line) or a pattern.")
    if "kinds" in own and values["kinds"]:
        tr["kinds"] = [k for k in ATTACHMENT_KINDS if k in values["kinds"]]
    if "name" in own:
        tr["name"] = values["name"]
        if not values["name"]:
            f.errors["name"] = _("Enter the event name.")
    if "after" in own:
        after = durations.read(f, "after")
        if after is None and "after" not in f.errors:
            f.errors["after"] = _("Enter how long the user stays idle.")
        tr["after"] = after


def _conditions(values: dict[str, Any], f: Fields) -> list[dict[str, Any]]:
    """The `if` rows as conditions, values read as literals."""
    conditions = []
    for i, c in enumerate(values["if"]):
        if c["op"] not in OPS:
            f.errors[f"if[{i}].op"] = _("Choose an operator from the list.")
        if not c["var"]:
            f.errors[f"if[{i}].var"] = _("Enter the data key to test.")
        entry: dict[str, Any] = {"var": c["var"], "op": c["op"]}
        try:
            if c["op"] in LIST_OPS:
                entry["value"] = [parse_literal(v) for v in c["value"].split(",") if v.strip()]
            elif c["op"] not in NO_VALUE_OPS:
                entry["value"] = parse_literal(c["value"])
        except ValueError as exc:
            f.errors[f"if[{i}].value"] = str(exc)
        conditions.append(entry)
    return conditions


def _assignments(values: dict[str, Any], f: Fields) -> dict[str, str]:
    """The `set` rows as {key: template}; an empty or repeated key is an error on its row."""
    assignments: dict[str, str] = {}
    for i, row in enumerate(values["set"]):
        if not row["key"]:
            f.errors[f"set[{i}]"] = _("Enter the data key to set.")
        elif row["key"] in assignments:
            f.errors[f"set[{i}]"] = _("%(key)s is set twice.") % {"key": row["key"]}
        assignments[row["key"]] = row["value"]
    return assignments


def _actions(values: dict[str, Any], f: Fields) -> list[dict[str, Any]]:
    """The action rows as actions."""
    actions = []
    for i, a in enumerate(values["actions"]):
        if a["type"] not in ACTION_TYPES:
            f.errors[f"actions[{i}]"] = _("Choose an action type from the list.")
        entry = {"type": a["type"]}
        if a["type"] == "webhook":
            entry["url"] = a["url"]
            if not a["url"]:
                f.errors[f"actions[{i}].url"] = _("Enter the URL the data is posted to.")
        actions.append(entry)
    return actions


def edit_transition(document: dict[str, Any], transition_id: str, f: Fields, *, check: bool = True) -> Edit:
    """Apply a posted transition form to `document`."""
    transitions = document["transitions"]
    index = next(i for i, t in enumerate(transitions) if t.get("id") == transition_id)
    values = read_values(f)
    move = apply_action(values, f.text("_action"), f.errors)
    new_id = values["id"]
    if not new_id:
        f.errors["id"] = _("Enter an id for the transition.")
    elif new_id != transition_id and any(t.get("id") == new_id for t in transitions):
        f.errors["id"] = _("Another transition already has the id %(id)s.") % {"id": new_id}
    state_ids = {s.get("id") for s in document.get("states") or []}
    for end in ("from", "to"):
        if values[end] not in state_ids:
            f.errors[end] = _("Choose a state from the list.")
    edited = deep(document)
    edited["transitions"][index] = build_transition(values, transitions[index], f)
    if move and not f.errors:
        _move(edited["transitions"], index, -1 if move == "up" else 1)
    # Rows of `set` are keyed by name in the document: `set.greeting` is row i of the form.
    keys = [row["key"] for row in values["set"]]

    def translate(path: str) -> str:
        m = re.match(r"^set\.([^.\[]+)", path)
        return f"set[{keys.index(m.group(1))}]" if m and m.group(1) in keys else path

    select = f"transition:{new_id if not f.errors.get('id') else transition_id}"
    prefix = f"transitions[{_index_after_move(index, move, len(transitions), bool(f.errors))}]"
    return finish(document, edited, values, dict(f.errors), prefix, anchors(values), select, translate, check=check)


def _move(items: list[Any], index: int, step: int) -> None:
    """Move one transition up or down: the order decides which of two matching transitions fires."""
    target = index + step
    if 0 <= target < len(items):
        items[index], items[target] = items[target], items[index]


def _index_after_move(index: int, move: str | None, count: int, failed: bool) -> int:
    if failed or not move:
        return index
    target = index + (-1 if move == "up" else 1)
    return target if 0 <= target < count else index
