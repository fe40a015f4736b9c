"""The bot page's personal data section: retention and masking saved, one user's data erased after a confirm."""
from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.conftest import MAX_TOKEN, App, login, shoot
from tests.unit.test_masking import FLOW

SHOTS = Path("/tmp/shots/privacy")


def keep(page: Page, name: str) -> None:
    """A screenshot as a test artefact and under /tmp/shots/privacy for review."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    shoot(page, name)


def deliver(app: App, bot: str, user: int, text: str, n: int) -> None:
    update = {"update_type": "message_created", "timestamp": 1785182044286,
              "message": {"sender": {"user_id": user, "first_name": "Иван", "is_bot": False},
                          "recipient": {"chat_id": user + 1_000_000, "chat_type": "dialog"},
                          "timestamp": 1785182044286, "body": {"mid": f"mid.privacy.{user}.{n}", "text": text}}}
    answer = httpx.post(f"{app.url}/webhooks/max/{bot}", json=update, headers={"X-Max-Bot-Api-Secret": "priv_secret"})
    assert answer.status_code == 200, answer.text


def test_personal_data_settings_and_erasure(page: Page, app: App, browser, watch) -> None:
    assert app.api("POST", "/api/bots", json={"id": "priv-bot", "title": "Privacy", "token": MAX_TOKEN,
                                              "webhook_secret": "priv_secret"}).status_code == 201
    assert app.api("POST", "/api/flows", json={**FLOW, "id": "privreg"}).status_code == 201
    version = app.api("POST", "/api/flows/privreg/versions", json={}).json()["version"]
    assert app.api("POST", "/api/bots/priv-bot/publish", json={"flow": "privreg", "version": version}).status_code == 200
    for n, text in enumerate(["/start", "+7 916 123-45-67"]):
        deliver(app, "priv-bot", 4242, text, n)
    assert app.api("GET", "/api/bots/priv-bot/users/4242/session").json()["state"] == "ask_email"

    page.goto(app.url + "/bots/priv-bot")
    card = page.locator("#bot-privacy")
    expect(card.get_by_label("Keep transcripts for, days")).to_have_value("30")
    card.get_by_label("Keep transcripts for, days").fill("many")
    card.get_by_role("button", name="Apply privacy settings").click()
    expect(card.locator(".field-error")).to_contain_text("whole number of days")
    card.get_by_label("Keep transcripts for, days").fill("14")
    card.get_by_label("Hide these data keys in transcripts").fill("city, name")
    card.get_by_label("phone number").check()
    card.get_by_role("button", name="Apply privacy settings").click()
    expect(card.locator(".notice.ok")).to_contain_text("kept 14 days")
    bot = app.api("GET", "/api/bots/priv-bot").json()
    assert (bot["retention_days"], bot["mask_keys"], bot["mask_inputs"]) == (14, ["city", "name"], ["phone"])
    keep(page, "bot-privacy-saved")

    card.get_by_label("MAX user id").fill("42a")
    card.get_by_role("button", name="Erase the user's data").click()
    expect(card.locator(".field-error")).to_contain_text("digits only")
    card.get_by_label("MAX user id").fill("4242")
    card.get_by_role("button", name="Erase the user's data").click()  # the confirm is accepted by `watch`
    expect(card.locator(".notice.ok")).to_contain_text("The data of user 4242 is erased")
    expect(card.locator(".notice.ok")).to_contain_text("Transcript records: 2")
    keep(page, "bot-privacy-erased")
    assert app.api("GET", "/api/bots/priv-bot/users/4242/session").status_code == 404
    assert app.api("GET", "/api/bots/priv-bot/users/4242/timeline").json() == []
    page.get_by_role("link", name="Русский").click()
    expect(page.locator("#bot-privacy")).to_contain_text("Хранить расшифровки, дней")
    keep(page, "bot-privacy-ru")
    page.get_by_role("link", name="English").click()  # the choice is kept per user: other tests read English
    expect(page.locator("#bot-privacy")).to_contain_text("Keep transcripts for, days")
    audit = app.api("GET", "/api/audit").json()
    assert [e["action"] for e in audit[:2]] == ["bot.user_erase", "bot.update"]

    other = browser.new_context(viewport={"width": 1500, "height": 900}, locale="en-US")
    try:
        viewer = login(other, app, "vera", watch)
        viewer.goto(app.url + "/bots/priv-bot")
        viewer.get_by_role("link", name="Русский").click()
        section = viewer.locator("#bot-privacy")
        expect(section).to_contain_text("Расшифровки хранятся 14 дн.")
        expect(section).to_contain_text("city, name, номер телефона")
        expect(section.get_by_role("button")).to_have_count(0)
        keep(viewer, "bot-privacy-viewer")
        viewer.get_by_role("link", name="English").click()  # the choice is kept per user: other tests read English
        expect(viewer.locator("#bot-privacy")).to_contain_text("Transcripts are kept 14 days")
    finally:
        other.close()
