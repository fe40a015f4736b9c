"""Reminders and timeouts fire on time and once, with one replica or two sharing Redis."""
from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, running, serving, texts
from tests.integration.runtime_support import REDIS_URL, redis_prefix, sqlite_url  # noqa: F401

BOT = "timebot"


def waiting_flow(timeout: float = 3) -> dict[str, Any]:
    return {
        "format": "botflow/v1", "id": "pay", "title": "Pay", "start": "wait_pay",
        "settings": {"session_ttl": 600, "reminder": {"after": 1, "text": "Напоминаем: ждём оплату"}},
        "states": [{"id": "wait_pay", "say": [{"text": "Ждём оплату"}]},
                   {"id": "late", "final": True, "say": [{"text": "Время вышло"}]}],
        "transitions": [{"id": "too_late", "from": "wait_pay", "to": "late", "on": "timeout", "after": timeout}],
    }


@pytest.mark.parametrize("backend", ["redis", "sql"])
async def test_reminder_and_timeout_fire_on_time_once(backend: str, fake_max: FakeMax, request) -> None:  # noqa: F811
    async with serving(request, backend, fake_max.url, BOT, waiting_flow()) as h:
        opened = time.monotonic()
        await h.deliver(BOT, msg(8001, "hi"))
        await fake_max.wait_for(lambda f: "Время вышло" in texts(f, 8001), timeout=8)
        fired_after = time.monotonic() - opened
        for _ in range(100):  # the reply goes out just before the turn is saved
            if (await h.api("GET", f"/api/bots/{BOT}/users/8001/session")).status_code == 404:
                break
            await asyncio.sleep(0.02)
        else:
            pytest.fail("the dialog still exists after its final state")
        timeline = (await h.api("GET", f"/api/bots/{BOT}/users/8001/timeline")).json()
    assert fired_after < 3 + 2  # due after 3 s, allowed 2 s late
    assert texts(fake_max, 8001) == ["Ждём оплату", "Напоминаем: ждём оплату", "Время вышло"]
    assert [e["transition"] for e in timeline if e["kind"] == "transition"] == ["too_late"]
    assert [e["kind"] for e in timeline].count("timer") == 2


async def test_two_replicas_fire_each_timer_exactly_once(sqlite_url: str, fake_max: FakeMax, redis_prefix: str,
                                                         monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as a, running(sqlite_url, fake_max.url, REDIS_URL) as b:
        await a.bot(BOT)
        await a.publish(BOT, waiting_flow(timeout=2))
        users = list(range(8100, 8130))
        await asyncio.gather(*((a if u % 2 else b).deliver(BOT, msg(u, "hi")) for u in users))
        await fake_max.wait_for(lambda f: all("Время вышло" in texts(f, u) for u in users), timeout=10)
        await asyncio.sleep(0.6)  # a second firing, if any, would land within a couple of timer passes
    for user in users:
        assert texts(fake_max, user) == ["Ждём оплату", "Напоминаем: ждём оплату", "Время вышло"], user
