"""The registration dialog end to end over MAX webhooks, on Redis and on the SQL store (SQLite, PostgreSQL)."""
from __future__ import annotations

import asyncio

import pytest

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, press, registration, serving, started, texts
from tests.integration.runtime_support import pg_fresh_url, redis_prefix, sqlite_url  # noqa: F401 (fixtures)

BOT = "regbot"


@pytest.fixture(params=["redis", "sqlite", "postgres"])
async def harness(request, fake_max: FakeMax) -> Harness:  # noqa: F811
    async with serving(request, request.param, fake_max.url, BOT, registration()) as h:
        yield h


async def test_registration_completes_over_webhooks(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    user = 5001
    for update in (msg(user, "/start"), msg(user, "Иван"), msg(user, "не телефон"), msg(user, "+79991234567"),
                   msg(user, "ivan@example.com")):
        assert (await harness.deliver(BOT, update)).status_code == 200
    session = (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).json()
    assert session == {"flow": "registration", "version": 1, "state": "ask_pdn",
                       "data": {"name": "Иван", "phone": "+79991234567", "email": "ivan@example.com"},
                       "history": ["ask_name", "ask_phone", "ask_email"]}
    assert (await harness.deliver(BOT, press(user, "yes", callback_id="cb-yes-1"))).status_code == 200
    assert texts(fake_max, user) == [
        "Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX", "Невалидный телефон. Повторите.",
        "Введите email", "Согласны на обработку персональных данных? (да/нет)",
        "Готово! Имя: Иван, телефон: +79991234567"]
    keyboard = fake_max.sent_messages(chat_id=user + 1_000_000)[4]["attachments"][0]
    assert keyboard["payload"]["buttons"][0][0] == {"type": "callback", "text": "Да", "payload": "yes"}
    assert [a["callback_id"] for a in fake_max.answers()] == ["cb-yes-1"]
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).status_code == 404
    entries = (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/timeline")).json()
    assert [e["kind"] for e in entries[:3]] == ["message", "command:restart", "reply"]
    fired = [e["transition"] for e in entries if e["kind"] == "transition"]
    assert fired == ["name_ok", "phone_ok", "email_ok", "pdn_yes_button"]
    assert entries[-1]["kind"] == "completed" and entries[-1]["state"] == "confirmed"


async def test_commands_back_help_and_fallback(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    user = 5002
    for text in ("Привет", "Анна", "назад", "/help", "Анна", "+79991234567"):
        await harness.deliver(BOT, msg(user, text))
    await harness.deliver(BOT, press(user, "stale-button"))  # a press nothing in ask_email knows
    await harness.deliver(BOT, msg(user, "/cancel"))
    assert texts(fake_max, user) == [
        "Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX", "Привет! Как вас зовут?",
        "Отвечайте на вопросы по одному. /cancel — отменить, назад — вернуться на шаг.",
        "Введите телефон в формате +7XXXXXXXXXX", "Введите email",
        "Не понял. Повторите, пожалуйста.", "Введите email", "Регистрация отменена."]
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).status_code == 404
    await harness.deliver(BOT, msg(user, "/start"))
    session = (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).json()
    assert (session["state"], session["data"]) == ("ask_name", {})


async def test_bot_started_opens_with_its_payload_and_restarts(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    user = 5003
    await harness.deliver(BOT, started(user, "promo"))
    await harness.deliver(BOT, msg(user, "Олег"))
    await harness.deliver(BOT, started(user, None))
    session = (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).json()
    assert (session["state"], session["data"]) == ("ask_name", {})
    assert texts(fake_max, user)[-1] == "Привет! Как вас зовут?"


async def test_a_redelivered_update_gets_one_reply(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    user = 5004
    first = msg(user, "/start", mid="mid.dup-1")
    assert (await harness.deliver(BOT, first)).status_code == 200
    assert (await harness.deliver(BOT, first)).status_code == 200
    await harness.deliver(BOT, msg(user, "Иван"))
    await harness.deliver(BOT, msg(user, "+79991234567"))
    await harness.deliver(BOT, msg(user, "ivan@example.com"))
    tap = press(user, "yes", callback_id="cb-dup")
    await harness.deliver(BOT, tap)
    await harness.deliver(BOT, tap)  # the dialog has ended: still a duplicate
    again = started(user, timestamp=1_700_000_000_123)
    await harness.deliver(BOT, again)
    await harness.deliver(BOT, again)
    assert texts(fake_max, user).count("Привет! Как вас зовут?") == 2  # the first /start and one bot_started
    assert texts(fake_max, user).count("Готово! Имя: Иван, телефон: +79991234567") == 1
    assert [a["callback_id"] for a in fake_max.answers()] == ["cb-dup", "cb-dup"]  # every press acknowledged


async def test_secret_body_and_ignored_types(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    assert (await harness.deliver(BOT, msg(1, "x"), secret="wrong")).status_code == 403
    no_header = await harness.client.post(f"/webhooks/max/{BOT}", json=msg(1, "x"))
    assert no_header.status_code == 403
    bad = await harness.client.post(f"/webhooks/max/{BOT}", content=b"{not json",
                                    headers={"X-Max-Bot-Api-Secret": "hook_secret-123"})
    assert bad.status_code == 400
    for content, reason in ((b"", "it is empty"), (b"  ", "it is empty"), (b'{"a": "\\ud800"}', "unpaired surrogate"),
                            (b'{"update_type": "message_cr', "truncated")):
        refused = await harness.client.post(f"/webhooks/max/{BOT}", content=content,
                                            headers={"X-Max-Bot-Api-Secret": "hook_secret-123"})
        assert refused.status_code == 400 and reason in refused.json()["message"], (content, refused.json())
    assert (await harness.deliver(BOT, {"update_type": "message_created"})).status_code == 200  # ignored
    assert (await harness.deliver(BOT, [1, 2])).status_code == 400
    ignored = {"update_type": "message_removed", "timestamp": 1, "message_id": "mid.1"}
    assert (await harness.deliver(BOT, ignored)).status_code == 200
    assert fake_max.sent_messages() == []


async def test_parallel_updates_of_one_user_run_one_at_a_time(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    counter = {
        "format": "botflow/v1", "id": "counter", "title": "Counter", "start": "count",
        "states": [{"id": "count", "say": [{"text": "n={log}"}],
                    "input": {"type": "text", "save_as": "last"}},
                   {"id": "done", "final": True}],
        "transitions": [{"id": "again", "from": "count", "to": "count", "on": "input",
                         "set": {"log": "{log}{last},"}},
                        {"id": "stop", "from": "count", "to": "done", "on": "text", "match": ["stop"]}],
    }
    await harness.bot("countbot")
    await harness.publish("countbot", counter)
    user = 5005
    await harness.deliver("countbot", msg(user, "open"))
    answers = await asyncio.gather(*(harness.deliver("countbot", msg(user, str(n))) for n in range(50)))
    assert all(a.status_code == 200 for a in answers)
    session = (await harness.api("GET", f"/api/bots/countbot/users/{user}/session")).json()
    handled = session["data"]["log"].rstrip(",").split(",")
    assert sorted(handled, key=int) == [str(n) for n in range(50)]  # no write lost
    replies = texts(fake_max, user)[1:]
    # Each reply shows the log as it was after its own turn: turns ran one after another.
    assert replies == ["n=" + ",".join(handled[: i + 1]) + "," for i in range(50)]
    timeline = (await harness.api("GET", f"/api/bots/countbot/users/{user}/timeline")).json()
    assert [e["text"] for e in timeline if e["kind"] == "message"][1:] == handled
