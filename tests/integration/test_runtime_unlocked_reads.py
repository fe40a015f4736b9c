"""A replica reads a dialog it wrote last without locking it; a copy made stale elsewhere is stepped again."""
from __future__ import annotations

import asyncio

from server import metrics
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, registration, replicas, texts
from tests.integration.runtime_support import REDIS_URL, redis_prefix, sqlite_url  # noqa: F401

BOT = "rotbot"
SCRIPT = ["/start", "Иван", "+79991234567", "ivan@example.com", "да"]
EXPECTED = ["Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX", "Введите email",
            "Согласны на обработку персональных данных? (да/нет)", "Готово! Имя: Иван, телефон: +79991234567"]


def restepped() -> float:
    return metrics.REGISTRY.get_sample_value("botflow_turns_restepped_total") or 0.0


def duplicates() -> float:
    return metrics.REGISTRY.get_sample_value("botflow_duplicate_deliveries_total", {"bot": BOT}) or 0.0


async def test_updates_rotating_over_three_replicas_keep_every_step_and_reply(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with replicas(3, sqlite_url, fake_max.url, REDIS_URL) as three:
        a = three[0]
        await a.bot(BOT)
        await a.publish(BOT, registration())
        before, repeated = restepped(), duplicates()
        rotating, staying = list(range(8100, 8112)), 8200

        async def play(user: int) -> None:
            for turn, text in enumerate(SCRIPT):
                # each turn on another replica, whose copy of the dialog is two turns old by then
                where = three[(user + turn) % 3] if user != staying else a
                update = msg(user, text)
                assert (await where.deliver(BOT, update)).status_code == 200
                if turn == 2:  # MAX repeats a delivery, to the replica that wrote the dialog last
                    assert (await where.deliver(BOT, update)).status_code == 200

        await asyncio.gather(*(play(user) for user in [*rotating, staying]))
        await fake_max.wait_for(lambda f: all(len(texts(f, u)) == len(EXPECTED) for u in [*rotating, staying]),
                                timeout=15)
        await asyncio.sleep(0.3)  # a doubled reply would follow right away
        sessions = [(await a.api("GET", f"/api/bots/{BOT}/users/{u}/session")).status_code for u in rotating]
    for user in [*rotating, staying]:
        assert texts(fake_max, user) == EXPECTED, user
    assert set(sessions) == {404}, "every dialog ended on its last step"
    # A replica's copy went stale on every rotating turn after its third: those were stepped again.
    assert restepped() - before >= len(rotating) * 2
    assert duplicates() - repeated == len(rotating) + 1, "each repeated delivery recognised once"
