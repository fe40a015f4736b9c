"""The settings form edits the reminder's buttons as the state form edits a message's: rows of buttons."""
from __future__ import annotations

import json
from pathlib import Path

from web.form_settings import edit_settings, settings_values
from web.forms import Fields

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "registration.json"


def posted(document: dict, **extra: str) -> Fields:
    """The settings form as the browser posts it for `document`, with `extra` fields changed or added."""
    values = settings_values(document)
    data = {"title": values["title"], "start": values["start"], "languages": values["languages"],
            "settings.session_ttl": values["session_ttl"]["amount"], "settings.session_ttl.unit": values["session_ttl"]["unit"],
            "settings.fallback": values["fallback"], "settings.start_on": values["start_on"],
            "settings.reminder.enabled": "on", "settings.reminder.after": values["reminder"]["after"]["amount"],
            "settings.reminder.after.unit": values["reminder"]["after"]["unit"],
            "settings.reminder.text": values["reminder"]["text"]}
    for name, cmd in values["commands"].items():
        data.update({f"commands.{name}.mode": cmd["mode"], f"commands.{name}.match": cmd["match"],
                     f"commands.{name}.reply": cmd["reply"]})
    for r, row in enumerate(values["reminder"]["buttons"]):
        for c, b in enumerate(row):
            base = f"settings.reminder.buttons[{r}][{c}]"
            data.update({f"{base}.text": b["text"], f"{base}.kind": b["kind"], f"{base}.value": b["value"]})
    data.update(extra)
    return Fields({k: [v] for k, v in data.items()})


def test_reminder_buttons_are_added_typed_and_removed_in_the_form() -> None:
    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert "buttons" not in document["settings"]["reminder"]
    added = edit_settings(document, posted(document, _action="add_row"))
    assert added.values["reminder"]["buttons"] == [[{"text": "", "kind": "payload", "value": ""}]]
    typed = edit_settings(document, posted(document, **{
        "settings.reminder.buttons[0][0].text": "Да", "settings.reminder.buttons[0][0].value": "yes",
        "settings.reminder.buttons[0][1].text": "Отмена", "settings.reminder.buttons[0][1].value": "/cancel"}))
    assert not typed.errors, typed.errors
    reminder = typed.document["settings"]["reminder"]
    assert reminder["buttons"] == [[{"text": "Да", "payload": "yes"}, {"text": "Отмена", "payload": "/cancel"}]]
    assert reminder["after"] == 900 and reminder["text"] == document["settings"]["reminder"]["text"]
    assert settings_values(typed.document)["reminder"]["buttons"][0][1] == {"text": "Отмена", "kind": "payload",
                                                                            "value": "/cancel"}
    removed = edit_settings(typed.document, posted(typed.document, _action="remove_button:0:0"))
    assert removed.document["settings"]["reminder"]["buttons"] == [[{"text": "Отмена", "payload": "/cancel"}]]
    gone = edit_settings(removed.document, posted(removed.document, _action="remove_button:0:0"))
    assert "buttons" not in gone.document["settings"]["reminder"]


def test_a_reminder_button_of_no_known_kind_is_marked_at_its_place() -> None:
    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    edit = edit_settings(document, posted(document, **{"settings.reminder.buttons[0][0].text": "Да",
                                                       "settings.reminder.buttons[0][0].kind": "teleport"}))
    assert edit.document is None and "settings.reminder.buttons[0][0]" in edit.errors
