"""The flow settings form: title, start state, session settings, reminder and global commands."""
from __future__ import annotations

from typing import Any

from flows.model import COMMANDS
from web.forms import Edit, Fields, clean, deep, finish
from web.i18n import N_
from web.i18n import gettext as _

START_ON = ("any", "command")
MODES = ("default", "custom", "off")
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
        "session_ttl": "" if settings.get("session_ttl") is None else str(settings["session_ttl"]),
        "fallback": settings.get("fallback", ""),
        "start_on": settings.get("start_on", "any"),
        "reminder": {"enabled": bool(reminder), "after": str(reminder.get("after", "")),
                     "text": reminder.get("text", "")},
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


def read_values(f: Fields) -> dict[str, Any]:
    return {
        "title": f.text("title"),
        "start": f.text("start"),
        "session_ttl": f.text("settings.session_ttl"),
        "fallback": f.text("settings.fallback"),
        "start_on": f.text("settings.start_on", "any"),
        "reminder": {"enabled": f.flag("settings.reminder.enabled"), "after": f.text("settings.reminder.after"),
                     "text": f.text("settings.reminder.text")},
        "commands": {name: {"mode": f.text(f"commands.{name}.mode", "default"),
                            "match": f.text(f"commands.{name}.match"),
                            "reply": f.text(f"commands.{name}.reply")} for name in COMMANDS},
    }


def anchors() -> list[str]:
    names = ["title", "start", "settings", "settings.session_ttl", "settings.fallback", "settings.start_on",
             "settings.reminder", "settings.reminder.after", "settings.reminder.text", "commands"]
    return names + [f"commands.{name}{part}" for name in COMMANDS for part in ("", ".match", ".reply")]


def edit_settings(document: dict[str, Any], f: Fields) -> Edit:
    """Apply a posted settings form to `document`."""
    values = read_values(f)
    edited = deep(document)
    edited["title"] = values["title"]
    state_ids = [s.get("id") for s in document.get("states") or []]
    if values["start"] and values["start"] not in state_ids:
        f.errors["start"] = _("Choose a state from the list.")
    edited["start"] = values["start"]
    old = document.get("settings") or {}
    settings: dict[str, Any] = {k: v for k, v in old.items() if k not in ("session_ttl", "fallback", "start_on", "reminder")}
    settings.update(clean({"session_ttl": f.number("settings.session_ttl", minimum=1),
                           "fallback": values["fallback"]}))
    if values["start_on"] not in START_ON:
        f.errors["settings.start_on"] = _("Choose when a dialog opens.")
    elif values["start_on"] != "any" or "start_on" in old:
        settings["start_on"] = values["start_on"]
    if values["reminder"]["enabled"]:
        reminder = {k: v for k, v in (old.get("reminder") or {}).items() if k not in ("after", "text")}
        after = f.number("settings.reminder.after", minimum=1)
        if after is None and "settings.reminder.after" not in f.errors:
            f.errors["settings.reminder.after"] = _("Enter after how many idle seconds the reminder is sent.")
        reminder.update({"after": after, "text": values["reminder"]["text"]})
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
    return finish(document, edited, values, dict(f.errors), "", anchors(), "settings")
