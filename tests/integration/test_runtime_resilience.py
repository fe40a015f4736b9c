"""Redis outages, restarts, several replicas and a refusing MAX API: no dialog or reply is lost."""
from __future__ import annotations

import asyncio

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, press, registration, running, texts
from tests.integration.runtime_support import REDIS_URL, TcpProxy, redis_prefix, sqlite_url  # noqa: F401

BOT = "resbot"
SCRIPT = ["/start", "Иван", "+79991234567", "ivan@example.com"]
DONE = "Готово! Имя: Иван, телефон: +79991234567"


async def test_redis_unreachable_answers_503_and_the_redelivery_succeeds(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with TcpProxy() as proxy, running(sqlite_url, fake_max.url, proxy.url) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        assert (await h.deliver(BOT, msg(6001, "/start"))).status_code == 200
        await proxy.stop()
        update = msg(6001, "Иван")
        refused = await h.deliver(BOT, update)
        assert refused.status_code == 503
        assert (await h.client.get("/readyz")).status_code == 503
        assert (await h.api("GET", f"/api/bots/{BOT}/users/6001/session")).status_code == 503
        await proxy.start()
        assert (await h.deliver(BOT, update)).status_code == 200  # MAX delivers the same update again
        assert texts(fake_max, 6001) == ["Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX"]


async def test_a_restarted_app_continues_the_dialog(sqlite_url: str, fake_max: FakeMax, redis_prefix: str,
                                                    monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        for text in SCRIPT[:2]:
            await h.deliver(BOT, msg(6002, text))
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        for text in SCRIPT[2:]:
            await h.deliver(BOT, msg(6002, text))
        await h.deliver(BOT, press(6002, "yes"))
    assert texts(fake_max, 6002)[-1] == DONE


async def test_two_replicas_sharing_redis_complete_every_dialog(sqlite_url: str, fake_max: FakeMax,
                                                                redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as a, running(sqlite_url, fake_max.url, REDIS_URL) as b:
        await a.bot(BOT)
        await a.publish(BOT, registration())
        users = list(range(6100, 6120))

        async def dialog(user: int) -> None:
            replicas = [a, b] if user % 2 else [b, a]
            for n, text in enumerate(SCRIPT):
                assert (await replicas[n % 2].deliver(BOT, msg(user, text))).status_code == 200
            assert (await replicas[0].deliver(BOT, press(user, "yes"))).status_code == 200

        await asyncio.gather(*(dialog(user) for user in users))
        # The same user hammering both replicas at once: turns still run one at a time.
        burst = [(a if n % 2 else b).deliver(BOT, msg(6200, "/start" if n == 0 else "x" * 5)) for n in range(20)]
        assert all(r.status_code == 200 for r in await asyncio.gather(*burst))
    for user in users:
        assert texts(fake_max, user)[-1] == DONE, user


async def test_refused_replies_wait_in_the_outbox_and_keep_their_order(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        fake_max.fail_next(2, 503, "/messages")
        assert (await h.deliver(BOT, msg(6003, "/start"))).status_code == 200  # queued: still a 200
        assert (await h.deliver(BOT, msg(6003, "Иван"))).status_code == 200
        fake_max.fail_next(1, 429, "/messages")
        await h.deliver(BOT, msg(6003, "+79991234567"))
        await fake_max.wait_for(lambda f: len(texts(f, 6003)) == 3, timeout=15)
    assert texts(fake_max, 6003) == ["Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX",
                                     "Введите email"]


async def test_queued_replies_survive_a_restart(sqlite_url: str, fake_max: FakeMax, redis_prefix: str,
                                                monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        fake_max.set_down(True)
        assert (await h.deliver(BOT, msg(6004, "/start"))).status_code == 200
    fake_max.set_down(False)
    assert texts(fake_max, 6004) == []
    async with running(sqlite_url, fake_max.url, REDIS_URL):
        await fake_max.wait_for(lambda f: texts(f, 6004), timeout=15)
    assert texts(fake_max, 6004) == ["Привет! Как вас зовут?"]
