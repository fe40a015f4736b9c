"""The bot page: a rollback answers with the parts of the page it changes; delivery errors in words."""
from __future__ import annotations

import time
import uuid

import pytest

from server import metrics
from web import bot_health
from tests.integration.api_helpers import create_flow, flow_doc, freeze, two_versions

BOT = "rollbot"


async def two_versions_published(client, headers, bot: str = BOT) -> None:
    assert (await client.post("/api/bots", json={"id": bot, "token": "t"}, headers=headers)).status_code == 201
    await two_versions(client, headers, "rolled")
    for version in (1, 2):
        published = await client.post(f"/api/bots/{bot}/publish", json={"flow": "rolled", "version": version},
                                      headers=headers)
        assert published.status_code == 200, published.text


async def test_a_rollback_redraws_what_the_bot_serves_and_offers_no_rollback_to_the_current_version(
        app_client, admin_headers) -> None:
    await two_versions_published(app_client, admin_headers)
    page = await app_client.get(f"/bots/{BOT}", headers=admin_headers)
    assert page.status_code == 200 and page.text.count("Roll back to version 1") == 1
    # Flows are named by their (draft's) title, the id on hover: the header and each publication.
    assert page.text.count('<a href="/flows/rolled/versions" title="rolled">Second</a>') == 3
    csrf = app_client.cookies.get("csrftoken", "")
    answer = await app_client.post(f"/bots/{BOT}/rollback", data={"flow": "rolled", "version": "1", "sessions": "keep"},
                                   headers={**admin_headers, "HX-Request": "true", "X-CSRFToken": csrf})
    assert answer.status_code == 200, answer.text
    assert "now serves Second version 1" in answer.text and "title=\"rollbot · rolled\"" in answer.text
    # The bot page has no versions-page parts to update; its own header is what changed.
    assert 'id="bot-serving" hx-swap-oob="outerHTML"' in answer.text and "version 1" in answer.text
    assert 'id="serving"' not in answer.text and 'id="publish-bot"' not in answer.text
    history = await app_client.get(f"/bots/{BOT}", headers={**admin_headers, "HX-Request": "true"})
    # Now 1 (current), 2, 1: only version 2 can be rolled back to; version 1 is what runs.
    assert "Roll back to version 2" in history.text and "Roll back to version 1" not in history.text


async def test_delivery_errors_are_counted_in_words_that_agree_with_the_count(app_client, admin_headers) -> None:
    bot = "words" + uuid.uuid4().hex[:8]  # the counters are the process's own: a bot no other test has used
    await two_versions_published(app_client, admin_headers, bot)
    metrics.REPLIES.labels(bot=bot, result="retried").inc(5)
    metrics.REPLIES.labels(bot=bot, result="refused").inc(1)
    page = await app_client.get(f"/bots/{bot}", headers={**admin_headers, "Accept-Language": "ru"})
    assert "5</span> ответов будут отправлены повторно" in page.text and "1</span> ответ MAX отклонил" in page.text
    english = await app_client.get(f"/bots/{bot}", headers={**admin_headers, "Accept-Language": "en"})
    assert "5</span> replies to be sent again" in english.text and "1</span> reply MAX refused" in english.text


async def test_a_missing_version_to_download_is_a_page_not_a_file(app_client, admin_headers) -> None:
    await create_flow(app_client, admin_headers, flow_doc("frozen"))
    await freeze(app_client, admin_headers, "frozen", "v1")
    missing = await app_client.get("/flows/frozen/versions/99/download", headers=admin_headers)
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
    assert "content-disposition" not in missing.headers
    found = await app_client.get("/flows/frozen/versions/1/download", headers=admin_headers)
    assert found.status_code == 200 and found.headers["content-type"].startswith("application/json")


async def test_the_services_refusals_are_said_in_the_readers_language(app_client, admin_headers) -> None:
    await two_versions_published(app_client, admin_headers)
    await app_client.get("/bots", headers=admin_headers)
    page = {**admin_headers, "HX-Request": "true", "X-CSRFToken": app_client.cookies.get("csrftoken", "")}
    for language, words in (("ru", "сначала строчная латинская буква"), ("en", "a lowercase Latin letter first")):
        refused = await app_client.post("/bots", data={"id": "Bad/Id", "token": "t"},
                                        headers={**page, "Accept-Language": language})
        assert refused.status_code == 422 and words in refused.text, refused.text
    listed = await app_client.get("/flows", headers={**admin_headers, "HX-Request": "true"})
    row = listed.text.split('data-flow="rolled"')[1].split("</tr>")[0]
    assert "disabled" in row and "publish another flow to it first" in row and "hx-post" not in row
    in_use = await app_client.post("/flows/rolled/delete", headers={**page, "Accept-Language": "ru"})
    assert in_use.status_code == 409
    assert f"Сценарий «Second» сейчас работает в ботах: {BOT}; сначала опубликуйте в них другой сценарий." in in_use.text
    api = await app_client.delete("/api/flows/rolled", headers={**admin_headers, "Accept-Language": "ru"})
    assert api.status_code == 409 and api.json()["message"] == (
        f"The flow 'Second' (rolled) is served by {BOT} ({BOT}); publish another flow to those bots first.")  # the API stays English


@pytest.mark.parametrize("age, russian, english", [(30, "Ошибки за последнюю минуту", "Errors in the last minute"),
                                                   (300, "Ошибки за последние 5 минут", "Errors in the last 5 minutes")])
async def test_a_young_history_is_counted_in_whole_minutes(app_client, admin_headers, monkeypatch, age, russian,
                                                           english) -> None:
    bot = "young" + uuid.uuid4().hex[:8]
    await two_versions_published(app_client, admin_headers, bot)
    # Under an hour, the card counts since the process started: start it `age` seconds ago.
    monkeypatch.setattr(bot_health, "STARTED", time.time() - age)
    page = await app_client.get(f"/bots/{bot}", headers={**admin_headers, "Accept-Language": "ru"})
    assert russian in page.text and " мин:" not in page.text and "1 мин" not in page.text
    page = await app_client.get(f"/bots/{bot}", headers={**admin_headers, "Accept-Language": "en"})
    assert english in page.text


async def test_messages_from_groups_are_counted_on_the_page_in_both_languages(app_client, admin_headers) -> None:
    bot = "groups" + uuid.uuid4().hex[:8]
    await two_versions_published(app_client, admin_headers, bot)
    quiet = await app_client.get(f"/bots/{bot}", headers={**admin_headers, "Accept-Language": "ru"})
    assert "Сообщения из групп пропущены" in quiet.text and "молчит в групповых чатах и каналах" in quiet.text
    metrics.UPDATES_IGNORED.labels(bot=bot, reason="group").inc(3)
    metrics.UPDATES_IGNORED.labels(bot=bot, reason="no_message").inc(7)  # not a group's: not in this count
    page = await app_client.get(f"/bots/{bot}", headers={**admin_headers, "Accept-Language": "ru"})
    assert "3</span> сообщения из групповых чатов или каналов" in page.text
    english = await app_client.get(f"/bots/{bot}", headers={**admin_headers, "Accept-Language": "en"})
    assert "Messages from groups ignored" in english.text
    assert "3</span> messages from group chats or channels" in english.text


def test_a_webhook_max_no_longer_lists_is_said_with_how_to_subscribe_again() -> None:
    from server.channels.max.watchdog import Health

    gone = Health(None, False, time.time(), missing=True)
    tag, words = bot_health.subscription_words(gone, None, "shop")
    assert tag == "gone" and "no longer lists a webhook" in words
    assert "botflow max subscribe --bot shop --url https://" in words and "BOTFLOW_PUBLIC_URL" in words
    listed = Health("https://elsewhere.example/webhooks/max/shop", True, time.time())
    assert bot_health.subscription_words(listed, None, "shop") == (
        "ok", "MAX delivers to https://elsewhere.example/webhooks/max/shop. Checked just now.")
    refused = Health("http://10.0.0.5:8000/webhooks/max/shop", False, time.time(), missing=True, refused=True)
    tag, words = bot_health.subscription_words(refused, "http://10.0.0.5:8000", "shop")
    assert tag == "gone" and "https:// address on port 443" in words
