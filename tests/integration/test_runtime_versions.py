"""Publishing while dialogs run: keep, migrate, reset, and every replica picking the publish up."""
from __future__ import annotations

import asyncio
import copy

import pytest

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, press, registration, running, serving, texts
from tests.integration.runtime_support import REDIS_URL, redis_prefix, sqlite_url  # noqa: F401

BOT = "verbot"


def second_version() -> dict:
    """Registration v2: a new greeting, and ask_email renamed to ask_mail."""
    doc = copy.deepcopy(registration())
    doc["states"][0]["say"][0]["text"] = "Здравствуйте! Ваше имя?"
    for state in doc["states"]:
        if state["id"] == "ask_email":
            state["id"] = "ask_mail"
    for tr in doc["transitions"]:
        tr["from"] = "ask_mail" if tr["from"] == "ask_email" else tr["from"]
        tr["to"] = "ask_mail" if tr["to"] == "ask_email" else tr["to"]
    doc["layout"] = {}
    return doc


@pytest.fixture(params=["redis", "sql"])
async def harness(request, fake_max: FakeMax) -> Harness:  # noqa: F811
    async with serving(request, request.param, fake_max.url, BOT, registration()) as h:
        yield h


async def session(h: Harness, user: int) -> dict | None:
    answer = await h.api("GET", f"/api/bots/{BOT}/users/{user}/session")
    return answer.json() if answer.status_code == 200 else None


async def test_keep_lets_old_dialogs_finish_on_their_version(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    for text in ("/start", "Иван"):
        await harness.deliver(BOT, msg(7001, text))
    await harness.publish(BOT, second_version(), "keep")
    await harness.deliver(BOT, msg(7002, "/start"))  # a new user gets v2
    assert texts(fake_max, 7002) == ["Здравствуйте! Ваше имя?"]
    assert (await session(harness, 7002))["version"] == 2
    for text in ("+79991234567", "ivan@example.com"):
        await harness.deliver(BOT, msg(7001, text))
    assert (await session(harness, 7001))["version"] == 1
    assert (await session(harness, 7001))["state"] == "ask_pdn"
    await harness.deliver(BOT, press(7001, "yes"))
    assert texts(fake_max, 7001)[-1] == "Готово! Имя: Иван, телефон: +79991234567"
    await harness.deliver(BOT, msg(7001, "/start"))  # a restarted dialog is new: it runs v2
    assert texts(fake_max, 7001)[-1] == "Здравствуйте! Ваше имя?"


async def test_migrate_moves_dialogs_whose_state_exists(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    for text in ("/start", "Иван"):
        await harness.deliver(BOT, msg(7003, text))  # at ask_phone: exists in v2
    for text in ("/start", "Иван", "+79991234567"):
        await harness.deliver(BOT, msg(7004, text))  # at ask_email: gone in v2
    await harness.publish(BOT, second_version(), "migrate")
    moved = await session(harness, 7003)
    assert (moved["version"], moved["state"], moved["data"]) == (2, "ask_phone", {"name": "Иван"})
    assert moved["history"] == ["ask_name"]
    assert await session(harness, 7004) is None
    sent = len(texts(fake_max, 7004))
    await harness.deliver(BOT, msg(7003, "+79991234567"))
    assert (await session(harness, 7003))["state"] == "ask_mail"
    assert len(texts(fake_max, 7004)) == sent  # dropped silently
    timeline = (await harness.api("GET", f"/api/bots/{BOT}/users/7004/timeline")).json()
    assert timeline[-1]["kind"] == "dropped"


async def test_reset_drops_running_dialogs_silently(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    for text in ("/start", "Иван"):
        await harness.deliver(BOT, msg(7005, text))
    sent = len(fake_max.sent_messages())
    await harness.publish(BOT, second_version(), "reset")
    assert await session(harness, 7005) is None
    assert len(fake_max.sent_messages()) == sent
    await harness.deliver(BOT, msg(7005, "Иван"))  # opens a new dialog on v2
    assert texts(fake_max, 7005)[-1] == "Здравствуйте! Ваше имя?"


async def test_another_replica_serves_a_publish_at_once(sqlite_url: str, fake_max: FakeMax, redis_prefix: str,
                                                        monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as a, running(sqlite_url, fake_max.url, REDIS_URL) as b:
        await a.bot(BOT)
        await a.publish(BOT, registration())
        await b.deliver(BOT, msg(7006, "/start"))  # b caches v1
        await a.publish(BOT, second_version())
        await asyncio.sleep(1.0)  # the spec allows a replica one second to notice
        await b.deliver(BOT, msg(7007, "/start"))
    assert texts(fake_max, 7007) == ["Здравствуйте! Ваше имя?"]
