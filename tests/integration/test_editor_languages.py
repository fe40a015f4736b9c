"""The editor's forms on a flow in several languages: they edit the default language and keep the others."""
from __future__ import annotations

from tests.integration.api_helpers import create_flow
from tests.integration.test_api_simulate_languages import bilingual
from tests.integration.test_hostile_forms import signed_in


async def test_a_state_form_edit_keeps_every_translation(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, bilingual("form_lang"))
    shown = await app_client.get("/flows/form_lang/edit/state/ask", headers=headers)
    assert shown.status_code == 200 and "Ваш цвет?" in shown.text and "Your colour?" not in shown.text
    draft = await app_client.get("/api/flows/form_lang", headers=admin_headers)
    form = {"id": "ask", "say[0].text": "Какой цвет?",
            "input.type": "choice", "input.save_as": "colour", "input.choices": "Красный\nСиний\nЗелёный"}
    answer = await app_client.post("/flows/form_lang/edit/state/ask", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
    assert answer.status_code == 200, answer.text
    state = (await app_client.get("/api/flows/form_lang", headers=admin_headers)).json()["states"][0]
    assert state["say"][0]["text"] == {"ru": "Какой цвет?", "en": "Your colour?"}
    assert state["input"]["choices"] == {"ru": ["Красный", "Синий", "Зелёный"], "en": ["Red", "Blue", "Зелёный"]}


async def test_the_settings_form_sets_and_checks_the_languages(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, bilingual("settings_lang"))

    async def post(languages: str):
        draft = await app_client.get("/api/flows/settings_lang", headers=admin_headers)
        form = {"title": "Two languages", "start": "ask",
                "languages": languages, "settings.start_on": "any"}
        for name in ("cancel", "restart", "back", "help"):
            form[f"commands.{name}.mode"] = "default"
        return await app_client.post("/flows/settings_lang/edit/settings", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})

    answer = await post("ru, EN, tt")
    assert answer.status_code == 200, answer.text
    doc = (await app_client.get("/api/flows/settings_lang", headers=admin_headers)).json()
    assert doc["languages"] == ["ru", "en", "tt"]
    refused = await post("ru, english")
    assert "2-3 letter codes" in refused.text
    await post("ru")  # English is dropped from every text
    doc = (await app_client.get("/api/flows/settings_lang", headers=admin_headers)).json()
    assert doc["languages"] == ["ru"] and doc["states"][0]["say"][0]["text"] == "Ваш цвет?"


async def test_the_side_panel_translates_a_state_into_the_chosen_language(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, bilingual("panel_lang"))
    shown = await app_client.get("/flows/panel_lang/edit/state/done?lang=en", headers=headers)
    assert shown.status_code == 200 and 'data-translate="en"' in shown.text and "Chosen: {colour}" in shown.text
    draft = await app_client.get("/api/flows/panel_lang", headers=admin_headers)
    form = {"lang": "en", "t:states[1].say[0].text": "Picked: {colour}"}
    answer = await app_client.post("/flows/panel_lang/edit/translate/state/done", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
    assert answer.status_code == 200, answer.text
    assert answer.headers.get("x-botflow-revision") and "draft-answer" in answer.text
    state = (await app_client.get("/api/flows/panel_lang", headers=admin_headers)).json()["states"][1]
    assert state["say"][0]["text"] == {"ru": "Выбран {colour}", "en": "Picked: {colour}"}
    stale = await app_client.post("/flows/panel_lang/edit/translate/state/done", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
    assert stale.status_code == 412  # the form was opened on an older draft: nothing is overwritten, as on the canvas


async def test_the_settings_texts_are_translated_in_the_side_panel_too(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    doc = bilingual("settings_tr")
    doc["settings"] = {"fallback": "Не понял."}
    doc["commands"] = {"help": {"match": ["/help"], "reply": "Помощь"}}
    await create_flow(app_client, admin_headers, doc)
    shown = await app_client.get("/flows/settings_tr/edit/settings?lang=en", headers=headers)
    assert shown.status_code == 200 and 'name="t:settings.fallback"' in shown.text
    assert 'name="t:commands.help.reply"' in shown.text
    draft = await app_client.get("/api/flows/settings_tr", headers=admin_headers)
    form = {"lang": "en", "t:settings.fallback": "Sorry?",
            "t:commands.help.reply": "Help"}
    answer = await app_client.post("/flows/settings_tr/edit/translate/settings", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
    assert answer.status_code == 200, answer.text
    saved = (await app_client.get("/api/flows/settings_tr", headers=admin_headers)).json()
    assert saved["settings"]["fallback"] == {"ru": "Не понял.", "en": "Sorry?"}
    assert saved["commands"]["help"]["reply"] == {"ru": "Помощь", "en": "Help"}
    # the default language is edited in the ordinary form, never here
    shown = await app_client.get("/flows/settings_tr/edit/settings?lang=ru", headers=headers)
    assert 'name="t:settings.fallback"' not in shown.text and 'name="settings.fallback"' in shown.text


async def test_the_transition_form_sets_and_keeps_a_language_switch(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    doc = bilingual("switch_lang")
    doc["transitions"][0]["language"] = "en"
    await create_flow(app_client, admin_headers, doc)
    shown = await app_client.get("/flows/switch_lang/edit/transition/picked", headers=headers)
    assert 'name="language"' in shown.text and '<option value="en" selected>' in shown.text

    async def post(**extra: str):
        draft = await app_client.get("/api/flows/switch_lang", headers=admin_headers)
        form = {"id": "picked", "from": "ask", "to": "done",
                "on": "input", **extra}
        answer = await app_client.post("/flows/switch_lang/edit/transition/picked", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
        assert answer.status_code == 200, answer.text
        return (await app_client.get("/api/flows/switch_lang", headers=admin_headers)).json()["transitions"][0]

    assert (await post(language="en", **{"if[0].var": "colour", "if[0].op": "set"}))["language"] == "en"
    assert "language" not in await post(language="")  # "its language, unchanged": no switch
    assert (await post(language="ru"))["language"] == "ru"
