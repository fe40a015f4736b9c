"""The flow settings form: title, start state, session settings, reminder and global commands."""
from __future__ import annotations

from typing import Any

from flows.languages import LANGUAGE_CODE
from flows.model import COMMANDS
from web import durations
from web.form_state import BUTTON_KINDS, button_document, button_values
from web.forms import Edit, Fields, clean, deep, finish, parse_action
from web.i18n import N_
from web.i18n import gettext as _

START_ON = ("any", "command")
MODES = ("default", "custom", "off")
REMINDER_BUTTONS = "settings.reminder.buttons"
# Commands whose reply is meaningful in the form (`restart` and `back` replies precede the state's messages).
COMMAND_TITLES = {"cancel": N_("Cancel"), "restart": N_("Restart"), "back": N_("Back"), "help": N_("Help")}
COMMAND_HELP = {
    "cancel": N_("drops the dialog and its data"),
    "restart": N_("drops the dialog and enters the start state"),
    "back": N_("returns to the previous waiting state"),
    "help": N_("replies and stays"),
}


def settings_values(document: dict[str, Any]) -> dict[str, Any]:
    """What the form shows for a stored document."""
    settings = document.get("settings") or {}
    reminder = settings.get("reminder") or {}
    commands = document.get("commands") or {}
    values: dict[str, Any] = {
        "title": document.get("title", ""),
        "start": document.get("start", ""),
        "languages": ", ".join(str(code) for code in document.get("languages") or []),
        "session_ttl": durations.shown(settings.get("session_ttl")),
        "fallback": settings.get("fallback", ""),
        "start_on": settings.get("start_on", "any"),
        "reminder": {"enabled": bool(reminder), "after": durations.shown(reminder.get("after")),
                     "text": reminder.get("text", ""),
                     "buttons": [[button_values(b) for b in row] for row in reminder.get("buttons") or []]},
        "commands": {},
    }
    for name in COMMANDS:
        if name not in commands:
            values["commands"][name] = {"mode": "default", "match": "", "reply": ""}
        elif commands[name] is None:
            values["commands"][name] = {"mode": "off", "match": "", "reply": ""}
        else:
            cmd = commands[name]
            values["commands"][name] = {"mode": "custom", "match": "\n".join(cmd.get("match") or []),
                                        "reply": cmd.get("reply") or ""}
    return values


def keep_command_texts(shown: dict[str, Any], posted: dict[str, Any]) -> dict[str, Any]:
    """The stored values, with the texts just typed for a command turned off (or to default) kept in the form."""
    for name, cmd in (shown.get("commands") or {}).items():
        typed = (posted.get("commands") or {}).get(name) or {}
        if cmd["mode"] != "custom" and not (cmd["match"] or cmd["reply"]):
            cmd["match"], cmd["reply"] = typed.get("match", ""), typed.get("reply", "")
    return shown


def read_values(f: Fields) -> dict[str, Any]:
    return {
        "title": f.text("title"),
        "start": f.text("start"),
        "languages": f.text("languages"),
        "session_ttl": durations.posted(f, "settings.session_ttl"),
        "fallback": f.text("settings.fallback"),
        "start_on": f.text("settings.start_on", "any"),
        "reminder": {"enabled": f.flag("settings.reminder.enabled"), "after": durations.posted(f, "settings.reminder.after"),
                     "text": f.text("settings.reminder.text"), "buttons": _posted_buttons(f, REMINDER_BUTTONS)},
        "commands": {name: {"mode": f.text(f"commands.{name}.mode", "default"),
                            "match": f.text(f"commands.{name}.match"),
                            "reply": f.text(f"commands.{name}.reply")} for name in COMMANDS},
    }


def _posted_buttons(f: Fields, prefix: str) -> list[list[dict[str, str]]]:
    """The keyboard rows posted under `prefix`, as button_values() shows them."""
    return [[{"text": f.text(f"{prefix}[{r}][{b}].text"), "kind": f.text(f"{prefix}[{r}][{b}].kind", "payload"),
              "value": f.text(f"{prefix}[{r}][{b}].value")} for b in f.indices(f"{prefix}[{r}]")]
            for r in f.indices(prefix)]


def apply_action(values: dict[str, Any], action: str) -> None:
    """Add or remove a reminder button row or button, as the pressed form button asks."""
    name, n = parse_action(action)
    rows = values["reminder"]["buttons"]
    try:
        if name == "add_row":
            rows.append([{"text": "", "kind": "payload", "value": ""}])
        elif name == "add_button":
            rows[n[0]].append({"text": "", "kind": "payload", "value": ""})
        elif name == "remove_button":
            rows[n[0]].pop(n[1])
            if not rows[n[0]]:
                rows.pop(n[0])
    except IndexError:
        pass  # a stale press on a row that is gone changes nothing


def anchors(values: dict[str, Any] | None = None) -> list[str]:
    names = ["title", "start", "languages", "settings", "settings.session_ttl", "settings.fallback", "settings.start_on",
             "settings.reminder", "settings.reminder.after", "settings.reminder.text", REMINDER_BUTTONS, "commands"]
    rows = ((values or {}).get("reminder") or {}).get("buttons") or []
    names += [f"{REMINDER_BUTTONS}[{r}][{b}]" for r, row in enumerate(rows) for b in range(len(row))]
    return names + [f"commands.{name}{part}" for name in COMMANDS for part in ("", ".match", ".reply")]


def edit_settings(document: dict[str, Any], f: Fields, *, check: bool = True) -> Edit:
    """Apply a posted settings form to `document`."""
    values = read_values(f)
    if f.text("_action"):
        apply_action(values, f.text("_action"))
    edited = deep(document)
    edited["title"] = values["title"]
    state_ids = [s.get("id") for s in document.get("states") or []]
    if values["start"] and values["start"] not in state_ids:
        f.errors["start"] = _("Choose a state from the list.")
    edited["start"] = values["start"]
    _languages(edited, values["languages"], f)
    old = document.get("settings") or {}
    settings: dict[str, Any] = {k: v for k, v in old.items() if k not in ("session_ttl", "fallback", "start_on", "reminder")}
    settings.update(clean({"session_ttl": durations.read(f, "settings.session_ttl"),
                           "fallback": values["fallback"]}))
    if values["start_on"] not in START_ON:
        f.errors["settings.start_on"] = _("Choose when a dialog opens.")
    elif values["start_on"] != "any" or "start_on" in old:
        settings["start_on"] = values["start_on"]
    if values["reminder"]["enabled"]:
        reminder = {k: v for k, v in (old.get("reminder") or {}).items() if k not in ("after", "text", "buttons")}
        after = durations.read(f, "settings.reminder.after")
        if after is None and "settings.reminder.after" not in f.errors:
            f.errors["settings.reminder.after"] = _("Enter after how long an idle user is reminded.")
        reminder.update({"after": after, "text": values["reminder"]["text"]})
        for r, row in enumerate(values["reminder"]["buttons"]):
            for c, button in enumerate(row):
                if button["kind"] not in BUTTON_KINDS:
                    f.errors[f"{REMINDER_BUTTONS}[{r}][{c}]"] = _("Choose what the button does.")
        rows = [[button_document(b) for b in row] for row in values["reminder"]["buttons"] if row]
        if rows:
            reminder["buttons"] = rows
        settings["reminder"] = reminder
    if settings or "settings" in document:
        edited["settings"] = settings
    commands = {k: v for k, v in (document.get("commands") or {}).items() if k not in COMMANDS}
    for name, cmd in values["commands"].items():
        if cmd["mode"] == "off":
            commands[name] = None
        elif cmd["mode"] == "custom":
            match = [line.strip() for line in cmd["match"].splitlines() if line.strip()]
            if not match:
                f.errors[f"commands.{name}.match"] = _("Enter the texts that run this command, one per line.")
            commands[name] = clean({"match": match, "reply": cmd["reply"]}) or {"match": []}
        elif cmd["mode"] != "default":
            f.errors[f"commands.{name}"] = _("Choose default, custom or off.")
    if commands or "commands" in document:
        edited["commands"] = commands
    return finish(document, edited, values, dict(f.errors), "", anchors(values), "settings", check=check)


def _languages(edited: dict[str, Any], written: str, f: Fields) -> None:
    """The flow's languages as typed ("ru, en"): the first is the default; blank removes the list."""
    codes = [code.strip().lower() for code in written.replace(";", ",").replace(" ", ",").split(",") if code.strip()]
    wrong = [code for code in codes if not LANGUAGE_CODE.fullmatch(code)]
    if wrong:
        f.errors["languages"] = _("Write languages as 2-3 letter codes, separated by commas: ru, en, tt.")
    elif len(set(codes)) != len(codes):
        f.errors["languages"] = _("Each language once, please.")
    elif codes:
        edited["languages"] = codes
    else:
        edited.pop("languages", None)
