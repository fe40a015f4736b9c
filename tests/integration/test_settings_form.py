"""The flow settings form: it keeps what was typed and stores times in seconds, whatever unit was chosen."""
from __future__ import annotations

import html
from typing import Any

from tests.integration.api_helpers import create_flow
from tests.integration.test_hostile_forms import signed_in

COMMANDS = ("cancel", "restart", "back", "help")


def small(flow_id: str) -> dict[str, Any]:
    return {
        "format": "botflow/v1", "id": flow_id, "title": "Small", "start": "ask",
        "states": [{"id": "ask", "say": [{"text": "Ваше имя?"}], "input": {"type": "text", "save_as": "name"}},
                   {"id": "done", "final": True, "say": [{"text": "Спасибо, {name}"}]}],
        "transitions": [{"id": "named", "from": "ask", "to": "done", "on": "input"}],
    }


class SettingsForm:
    """Posts the settings form of one flow as the editor does (the whole form, the draft's revision in If-Match)."""

    def __init__(self, client: Any, admin: dict[str, str], headers: dict[str, str], flow_id: str) -> None:
        self.client, self.admin, self.headers, self.flow_id = client, admin, headers, flow_id

    async def stored(self) -> dict[str, Any]:
        return (await self.client.get(f"/api/flows/{self.flow_id}", headers=self.admin)).json()

    async def post(self, **fields: str) -> Any:
        draft = await self.client.get(f"/api/flows/{self.flow_id}", headers=self.admin)
        form = {"title": "Small", "start": "ask",
                "settings.start_on": "any"}
        for name in COMMANDS:
            form[f"commands.{name}.mode"] = "default"
        form.update({key.replace("__", "."): value for key, value in fields.items()})
        return await self.client.post(f"/flows/{self.flow_id}/edit/settings", data=form,
                                      headers={**self.headers, "If-Match": draft.headers["etag"]})


async def form_for(app_client: Any, admin_headers: dict[str, str], flow_id: str) -> SettingsForm:
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, small(flow_id))
    return SettingsForm(app_client, admin_headers, headers, flow_id)


async def test_turning_a_command_off_and_on_again_keeps_its_texts(app_client, admin_headers):
    form = await form_for(app_client, admin_headers, "toggle_cmd")
    texts = {"commands__cancel__match": "стоп\nотмена", "commands__cancel__reply": "Хорошо, отменил."}
    answer = await form.post(commands__cancel__mode="custom", **texts)
    assert answer.status_code == 200, answer.text
    assert (await form.stored())["commands"]["cancel"] == {"match": ["стоп", "отмена"], "reply": "Хорошо, отменил."}

    off = await form.post(commands__cancel__mode="off", **texts)
    assert off.status_code == 200, off.text
    assert (await form.stored())["commands"]["cancel"] is None
    shown = html.unescape(off.text)
    assert "стоп\nотмена" in shown and 'value="Хорошо, отменил."' in shown  # still in the form, hidden

    # The form posts what it holds: turning it on again stores the same texts.
    on = await form.post(commands__cancel__mode="custom", **texts)
    assert on.status_code == 200, on.text
    assert (await form.stored())["commands"]["cancel"] == {"match": ["стоп", "отмена"], "reply": "Хорошо, отменил."}


async def test_times_are_typed_with_units_and_stored_as_seconds(app_client, admin_headers):
    form = await form_for(app_client, admin_headers, "units")
    answer = await form.post(settings__session_ttl="2", settings__session_ttl__unit="h",
                             settings__reminder__enabled="on", settings__reminder__after="15",
                             settings__reminder__after__unit="min", settings__reminder__text="Вы здесь?")
    assert answer.status_code == 200 and "X-Botflow-Rejected" not in answer.headers, answer.text
    settings = (await form.stored())["settings"]
    assert settings["session_ttl"] == 7200 and settings["reminder"]["after"] == 900
    shown = await app_client.get("/flows/units/edit/settings", headers={**form.headers, "HX-Request": "true"})
    assert 'name="settings.session_ttl" value="2"' in shown.text
    assert 'name="settings.reminder.after" value="15"' in shown.text
    assert '<option value="h" selected>' in shown.text and '<option value="min" selected>' in shown.text

    refused = await form.post(settings__session_ttl="0.5", settings__session_ttl__unit="weeks")
    assert refused.headers.get("X-Botflow-Rejected") and "Choose seconds, minutes, hours or days" in refused.text
    assert (await form.stored())["settings"]["session_ttl"] == 7200


async def test_a_timeout_is_typed_with_its_unit(app_client, admin_headers):
    form = await form_for(app_client, admin_headers, "timeout_units")
    draft = await app_client.get("/api/flows/timeout_units", headers=admin_headers)
    fields = {"id": "named", "from": "ask", "to": "done",
              "on": "timeout", "after": "3", "after.unit": "d"}
    answer = await app_client.post("/flows/timeout_units/edit/transition/named", data=fields,
                                   headers={**form.headers, "If-Match": draft.headers["etag"]})
    assert answer.status_code == 200 and "X-Botflow-Rejected" not in answer.headers, answer.text
    assert (await form.stored())["transitions"][0]["after"] == 259200
    assert 'name="after" value="3"' in answer.text and '<option value="d" selected>' in answer.text
