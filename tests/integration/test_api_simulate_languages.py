"""The simulator speaks a flow's languages: `user_locale` opens the dialog in one, the answer names it."""
from __future__ import annotations

from tests.integration.api_helpers import create_flow
from tests.integration.test_api_simulate import sim


def bilingual(flow_id: str = "bilingual") -> dict:
    return {
        "format": "botflow/v1", "id": flow_id, "title": "Two languages", "start": "ask", "languages": ["ru", "en"],
        "states": [
            {"id": "ask", "say": [{"text": {"ru": "Ваш цвет?", "en": "Your colour?"}}],
             "input": {"type": "choice", "save_as": "colour",
                       "choices": {"ru": ["Красный", "Синий"], "en": ["Red", "Blue"]}}},
            {"id": "done", "final": True, "say": [{"text": {"ru": "Выбран {colour}", "en": "Chosen: {colour}"}}]},
        ],
        "transitions": [{"id": "picked", "from": "ask", "to": "done", "on": "input"}],
    }


async def test_user_locale_opens_the_sandbox_dialog_in_that_language(app_client, admin_headers):
    await create_flow(app_client, admin_headers, bilingual())
    opened = await sim(app_client, admin_headers, "bilingual", {"bot_started": None, "user_locale": "en-US"})
    assert opened["language"] == "en" and opened["session"]["language"] == "en"
    assert opened["replies"][0]["text"] == "Your colour?"
    done = await sim(app_client, admin_headers, "bilingual", {"text": "blue", "user_locale": "ru"})
    assert done["replies"][0]["text"] == "Chosen: Синий"
    russian = await sim(app_client, admin_headers, "bilingual", {"text": "привет"}, session="s2")
    assert russian["language"] == "ru" and russian["replies"][0]["text"] == "Ваш цвет?"


async def test_a_bad_user_locale_is_refused_with_a_sentence(app_client, admin_headers):
    await create_flow(app_client, admin_headers, bilingual("bad_locale"))
    response = await app_client.post("/api/flows/bad_locale/simulate", headers=admin_headers,
                                     json={"session": "s", "update": {"text": "hi", "user_locale": 42}})
    assert response.status_code == 422
    assert "user_locale" in response.json()["message"]
