"""The state form: messages with button rows, input type and its options, final flag, notes."""
from __future__ import annotations

from typing import Any

from flows.format import INPUT_OPTIONS, STATE_ID
from flows.markup import FORMATS
from flows.model import AFTER_PRESS, ATTACHMENT_KINDS, INPUT_TYPES
from web.forms import Edit, Fields, clean, deep, finish, parse_action
from web.i18n import gettext as _

INPUT_KINDS = ATTACHMENT_KINDS


# What a button does: send a payload, open a link, or ask the user's client for a contact or location.
BUTTON_KINDS = ("payload", "url", "contact", "location")
REQUESTS = ("contact", "location")


def button_values(button: dict[str, Any]) -> dict[str, str]:
    """A stored button as the form shows it: text, kind and the payload or URL (none for requests)."""
    if "url" in button:
        return {"text": button.get("text", ""), "kind": "url", "value": button.get("url", "")}
    if button.get("request") in REQUESTS:
        return {"text": button.get("text", ""), "kind": button["request"], "value": ""}
    return {"text": button.get("text", ""), "kind": "payload", "value": button.get("payload", "")}


def button_document(button: dict[str, str]) -> dict[str, str]:
    """A posted button as the document stores it."""
    if button["kind"] in REQUESTS:
        return {"text": button["text"], "request": button["kind"]}
    return {"text": button["text"], "url" if button["kind"] == "url" else "payload": button["value"]}


def state_values(document: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """What the form shows for a stored state."""
    inp = state.get("input") or {}
    return {
        "id": state.get("id", ""),
        "title": state.get("title", ""),
        "final": bool(state.get("final")),
        "start": document.get("start") == state.get("id"),
        "note": state.get("note", ""),
        "after_press": state.get("after_press", "keep"),
        "say": [{"text": m.get("text", ""),
                 "buttons": [[button_values(b) for b in row] for row in m.get("buttons") or []],
                 **look_values(m)}
                for m in state.get("say") or []],
        "input": {
            "type": inp.get("type", ""),
            "save_as": inp.get("save_as", ""),
            "error": inp.get("error", ""),
            "max_attempts": _show(inp.get("max_attempts")),
            "min_length": _show(inp.get("min_length")),
            "max_length": _show(inp.get("max_length")),
            "min": _show(inp.get("min")),
            "max": _show(inp.get("max")),
            "choices": "\n".join(inp.get("choices") or []),
            "pattern": inp.get("pattern", ""),
            "kinds": list(inp.get("kinds") or []),
        },
    }


def look_values(message: dict[str, Any]) -> dict[str, str]:
    """A stored message's markup and picture as the form shows them."""
    picture = "upload" if "upload" in message else "image" if "image" in message else ""
    return {"format": message.get("format") or "", "picture": picture, "image": message.get("image", ""),
            "upload": message.get("upload", "")}


def look_document(message: dict[str, Any]) -> dict[str, str]:
    """A posted message's markup and picture as the document stores them (only what is set)."""
    out: dict[str, str] = {}
    if message["format"]:
        out["format"] = message["format"]
    if message["picture"] == "image" and message["image"].strip():
        out["image"] = message["image"].strip()
    elif message["picture"] == "upload" and message["upload"]:  # nothing chosen yet: no picture so far
        out["upload"] = message["upload"]
    return out


def _show(value: Any) -> str:
    return "" if value is None else str(value)


def read_values(f: Fields) -> dict[str, Any]:
    """The posted form in the shape of state_values(), strings as typed."""
    say = []
    for i in f.indices("say"):
        rows = []
        for r in f.indices(f"say[{i}].buttons"):
            rows.append([{"text": f.text(f"say[{i}].buttons[{r}][{b}].text"),
                          "kind": f.text(f"say[{i}].buttons[{r}][{b}].kind", "payload"),
                          "value": f.text(f"say[{i}].buttons[{r}][{b}].value")}
                         for b in f.indices(f"say[{i}].buttons[{r}]")])
        say.append({"text": f.text(f"say[{i}].text"), "buttons": rows, "format": f.text(f"say[{i}].format"),
                    "picture": f.text(f"say[{i}].picture"), "image": f.text(f"say[{i}].image"),
                    "upload": f.text(f"say[{i}].upload")})
    return {
        "id": f.text("id").strip(),
        "title": f.text("title"),
        "final": f.flag("final"),
        "start": f.flag("start"),
        "note": f.text("note"),
        "after_press": f.text("after_press", "keep"),
        "say": say,
        "input": {
            "type": f.text("input.type"),
            "save_as": f.text("input.save_as").strip(),
            "error": f.text("input.error"),
            "max_attempts": f.text("input.max_attempts"),
            "min_length": f.text("input.min_length"),
            "max_length": f.text("input.max_length"),
            "min": f.text("input.min"),
            "max": f.text("input.max"),
            "choices": f.text("input.choices"),
            "pattern": f.text("input.pattern"),
            "kinds": f.all("input.kinds"),
        },
    }


def apply_action(values: dict[str, Any], action: str) -> None:
    """Add or remove a message, a button row or a button, as the pressed form button asks."""
    name, n = parse_action(action)
    say = values["say"]
    try:
        if name == "add_message":
            say.append({"text": "", "buttons": [], "format": "", "picture": "", "image": "", "upload": ""})
        elif name == "remove_message":
            say.pop(n[0])
        elif name == "add_row":
            say[n[0]]["buttons"].append([{"text": "", "kind": "payload", "value": ""}])
        elif name == "add_button":
            say[n[0]]["buttons"][n[1]].append({"text": "", "kind": "payload", "value": ""})
        elif name == "remove_button":
            row = say[n[0]]["buttons"][n[1]]
            row.pop(n[2])
            if not row:
                say[n[0]]["buttons"].pop(n[1])
    except IndexError:
        pass  # a stale button press on a row that is gone changes nothing


def anchors(values: dict[str, Any]) -> list[str]:
    """Every place the form can show an error."""
    names = ["id", "title", "final", "start", "note", "after_press", "say", "input", "input.type", "input.save_as",
             "input.error", "input.max_attempts", "input.min_length", "input.max_length", "input.min",
             "input.max", "input.choices", "input.pattern", "input.kinds"]
    for i, message in enumerate(values["say"]):
        names += [f"say[{i}]", f"say[{i}].text", f"say[{i}].buttons", f"say[{i}].format", f"say[{i}].image",
                  f"say[{i}].upload"]
        for r, row in enumerate(message["buttons"]):
            names += [f"say[{i}].buttons[{r}][{b}]" for b in range(len(row))]
    return names


def build_state(values: dict[str, Any], original: dict[str, Any], f: Fields) -> dict[str, Any]:
    """The state object the values describe; unknown (`x-`) keys of the original are kept."""
    state = {k: v for k, v in original.items() if k.startswith("x-")}
    state["id"] = values["id"]
    if values["title"]:
        state["title"] = values["title"]
    if values["final"]:
        state["final"] = True
    elif "final" in original:
        state["final"] = False
    say = []
    for i, message in enumerate(values["say"]):
        entry: dict[str, Any] = {"text": message["text"]}
        for r, row in enumerate(message["buttons"]):
            for c, b in enumerate(row):
                if b["kind"] not in BUTTON_KINDS:
                    f.errors[f"say[{i}].buttons[{r}][{c}]"] = _("Choose what the button does.")
        rows = [[button_document(b) for b in row] for row in message["buttons"] if row]
        if rows:
            entry["buttons"] = rows
        if message["format"] not in ("",) + FORMATS:
            f.errors[f"say[{i}].format"] = _("Choose a format from the list.")
        entry.update(look_document(message))
        say.append(entry)
    if say or "say" in original:
        state["say"] = say
    inp = values["input"]
    if inp["type"]:
        state["input"] = _build_input(inp, original.get("input") or {}, f)
    if values["after_press"] not in AFTER_PRESS:
        f.errors["after_press"] = _("Choose what a pressed button does to its message.")
    elif values["after_press"] != "keep" or "after_press" in original:
        state["after_press"] = values["after_press"]
    if values["note"]:
        state["note"] = values["note"]
    return state


def _build_input(inp: dict[str, Any], original: dict[str, Any], f: Fields) -> dict[str, Any]:
    kind = inp["type"]
    if kind not in INPUT_TYPES:
        f.errors["input.type"] = _("Choose an input type from the list.")
    out: dict[str, Any] = {k: v for k, v in original.items() if k.startswith("x-")}
    out.update(clean({"type": kind, "save_as": inp["save_as"], "error": inp["error"],
                      "max_attempts": f.number("input.max_attempts", integer=True, minimum=1)}))
    options = INPUT_OPTIONS.get(kind, ())  # another type's option would be a format error
    if "min_length" in options:
        out.update(clean({"min_length": f.number("input.min_length", integer=True, minimum=0),
                          "max_length": f.number("input.max_length", integer=True, minimum=0)}))
    if "min" in options:
        integer = kind == "integer"
        out.update(clean({"min": f.number("input.min", integer=integer), "max": f.number("input.max", integer=integer)}))
    # Bounds the wrong way round accept no answer at all: the user would be stuck at this state.
    for low, high, field in (("min_length", "max_length", "input.max_length"), ("min", "max", "input.max")):
        if out.get(low) is not None and out.get(high) is not None and out[low] > out[high]:
            f.errors.setdefault(field, _("Make this at least the minimum (%(n)s): otherwise no answer is accepted.")
                                % {"n": out[low]})
    if "choices" in options:
        choices = f.lines("input.choices")
        if not choices:
            f.errors["input.choices"] = _("List at least one choice, one per line.")
        out["choices"] = choices
    if "pattern" in options:
        out["pattern"] = inp["pattern"]
        if not inp["pattern"]:
            f.errors["input.pattern"] = _("Enter the regular expression the input must match.")
    if "kinds" in options and inp["kinds"]:
        out["kinds"] = [k for k in INPUT_KINDS if k in inp["kinds"]]
    return out


def rename(document: dict[str, Any], old: str, new: str) -> None:
    """Give state `old` the id `new` everywhere the document names it."""
    for tr in document.get("transitions") or []:
        if tr.get("from") == old:
            tr["from"] = new
        if tr.get("to") == old:
            tr["to"] = new
    if document.get("start") == old:
        document["start"] = new
    layout = document.get("layout")
    if isinstance(layout, dict) and old in layout:
        layout[new] = layout.pop(old)


def edit_state(document: dict[str, Any], state_id: str, f: Fields, *, check: bool = True) -> Edit:
    """Apply a posted state form to `document` (the draft it was opened on)."""
    index = next(i for i, s in enumerate(document["states"]) if s.get("id") == state_id)
    values = read_values(f)
    action = f.text("_action")
    if action:
        apply_action(values, action)
    new_id = values["id"]
    if not STATE_ID.fullmatch(new_id):
        f.errors["id"] = _("Use lowercase letters, digits and _, starting with a letter (at most 64).")
    elif new_id != state_id and any(s.get("id") == new_id for s in document["states"]):
        f.errors["id"] = _("Another state already has the id %(id)s.") % {"id": new_id}
    edited = deep(document)
    state = build_state(values, document["states"][index], f)
    edited["states"][index] = state
    if not f.errors:
        if new_id != state_id:
            rename(edited, state_id, new_id)
        if values["start"]:
            edited["start"] = new_id
        elif edited.get("start") == new_id:
            edited["start"] = ""
    select = f"state:{new_id if not f.errors.get('id') else state_id}"
    return finish(document, edited, values, dict(f.errors), f"states[{index}]", anchors(values), select,
                  check=check)
