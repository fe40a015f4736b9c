"""In Russian at 1280x800: the bot page counts the group messages it ignored and says how to subscribe again;
the state panel chooses what a press does to its message's buttons."""
from __future__ import annotations

import json
from pathlib import Path

import httpx
from playwright.sync_api import Browser, expect

from tests.e2e.canvas import click_state, open_editor, settle
from tests.e2e.conftest import MAX_TOKEN, App, Watch, russian_page, shoot

ROOT = Path(__file__).resolve().parents[2]
GROUP = ROOT / "tests" / "data" / "max" / "message_created-group_chat.json"


def test_groups_ignored_and_the_press_choice_in_russian(browser: Browser, app: App, watch: Watch) -> None:
    flow = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    flow["id"] = "groups_ru"
    assert app.api("POST", "/api/flows", json=flow).status_code == 201
    assert app.api("POST", "/api/flows/groups_ru/versions", json={}).status_code in (200, 201)
    assert app.api("POST", "/api/bots", json={"id": "group-bot", "title": "Группы", "token": MAX_TOKEN,
                                              "webhook_secret": "group_secret"}).status_code == 201
    assert app.api("POST", "/api/bots/group-bot/publish", json={"flow": "groups_ru", "version": 1}).status_code == 200
    for n in range(2):  # two messages from a group chat: acknowledged, counted, nothing sent into the group
        update = json.loads(GROUP.read_text(encoding="utf-8"))
        update["message"]["body"]["mid"] += str(n)
        answer = httpx.post(app.url + "/webhooks/max/group-bot", json=update,
                            headers={"X-Max-Bot-Api-Secret": "group_secret"}, timeout=10)
        assert answer.status_code == 200
    sent = app.fake_max.requests("POST", "/messages")
    assert not [m for m in sent if m["query"].get("chat_id", "").startswith("-")]

    with russian_page(browser, app, watch, "groups_ru_admin", "admin") as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(app.url + "/bots/group-bot")
        card = page.locator("#bot-health")
        expect(card).to_contain_text("Сообщения из групп пропущены")
        expect(card).to_contain_text("сообщения из групповых чатов или каналов")
        card.scroll_into_view_if_needed()
        shoot(page, "ru-bot-page-groups-ignored")

        open_editor(page, app.url, "groups_ru")
        click_state(page, "ask_pdn")
        choice = page.locator("#panel").get_by_label("Когда нажата кнопка")
        expect(choice).to_have_value("keep")
        choice.select_option("replace")
        settle(page)
        page.locator("#panel").get_by_text("старую кнопку нельзя нажать второй раз").scroll_into_view_if_needed()
        shoot(page, "ru-editor-after-press")
    stored = app.api("GET", "/api/flows/groups_ru").json()
    assert [s.get("after_press") for s in stored["states"] if s["id"] == "ask_pdn"] == ["replace"]
