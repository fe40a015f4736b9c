"""A bot's page tells an operator the truth: delivery facts, and a test message answered in words."""
from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import MAX_TOKEN, App, shoot


def test_delivery_card_and_test_message(page: Page, app: App) -> None:
    assert app.api("POST", "/api/bots", json={"id": "ops-bot", "title": "Operations", "token": MAX_TOKEN,
                                              "webhook_secret": "ops_secret"}).status_code == 201
    assert app.api("POST", "/api/bots", json={"id": "stale-bot", "token": "revoked-token"}).status_code == 201
    page.goto(app.url + "/bots/ops-bot")
    card = page.locator("#bot-health")
    expect(card).to_contain_text("Webhook address")
    expect(card).to_contain_text("This server has no public address")
    expect(card).to_contain_text("nothing queued")
    expect(card.locator("dd").filter(has_text="none")).not_to_have_count(0)

    form = page.locator("#bot-test-message")
    form.get_by_label("MAX user id").fill("12a")
    form.get_by_role("button", name="Send a test message").click()
    expect(form.locator(".field-error")).to_contain_text("digits only")
    assert not app.fake_max.sent_messages(user_id=212843158)

    form.get_by_label("MAX user id").fill("212843158")
    form.get_by_role("button", name="Send a test message").click()
    expect(form.locator(".notice.ok")).to_contain_text("MAX accepted the message")
    assert app.fake_max.sent_messages(user_id=212843158)[-1]["text"].startswith("Test message from Botflow")
    shoot(page, "bot-page-delivery")

    page.goto(app.url + "/bots/stale-bot")
    form = page.locator("#bot-test-message")
    form.get_by_label("MAX user id").fill("212843158")
    form.get_by_role("button", name="Send a test message").click()
    expect(form.locator(".notice.error")).to_contain_text("the bot's token is not valid")
    shoot(page, "bot-page-test-message-refused")
