"""Funnel counters through real webhooks: exact counts with cancel, expiry, restarts and three replicas."""
from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, press, registration, replicas, running, serving, texts
from tests.integration.runtime_support import (  # noqa: F401 (fixtures)
    REDIS_URL, delete_prefix, migrated_database, redis_prefix, sqlite_url,
)

BOT = "funnelbot"
TTL = 3


def short_flow() -> dict[str, Any]:
    """The registration example with a session_ttl short enough to watch dialogs expire."""
    doc = registration()
    doc["settings"] = {"session_ttl": TTL}
    return doc


async def until(check, timeout: float = 8.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail("condition not reached in time")
        await asyncio.sleep(0.05)


async def rolled_up(h: Any) -> bool:
    return await h.runtime.store.roll_up() >= 1


async def funnel(h: Any, version: int, bot: str = BOT, **query: Any) -> dict[str, Any]:
    answer = await h.api("GET", f"/api/bots/{bot}/funnel", params={"version": version, **query})
    assert answer.status_code == 200, answer.text
    return answer.json()


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """The non-zero figures of a funnel answer, flat, for exact comparison."""
    out: dict[str, Any] = {}
    for st in report["states"]:
        if st["entered"]:
            out[f"entered {st['id']}"] = st["entered"]
        for how, n in st["ended"].items():
            if n:
                out[f"{how} {st['id']}"] = n
        for tr, n in st["left"].items():
            out[f"left {st['id']} by {tr}"] = n
    for tr in report["transitions"]:
        if tr["fired"]:
            out[f"fired {tr['id']}"] = tr["fired"]
    return out


async def complete(h: Any, user: int) -> None:
    for text in ("hi", "Иван", "+79001234567", "ivan@example.ru"):
        await h.deliver(BOT, msg(user, text))
    await h.deliver(BOT, press(user, "yes"))


async def scenario(h: Any, fake: FakeMax, base: int) -> None:
    """Seven dialogs' worth of openings: one completed, one cancelled, two expired, one restarted."""
    await h.deliver(BOT, msg(base + 3, "hi"))
    await h.deliver(BOT, msg(base + 4, "hi"))
    await asyncio.sleep(TTL + 0.5)
    await h.deliver(BOT, msg(base + 4, "hi"))  # its own next turn counts its expiry
    await h.runtime.store.sweep(time.time())  # the sweep counts the other one
    await complete(h, base + 1)
    for text in ("hi", "Пётр", "/cancel"):
        await h.deliver(BOT, msg(base + 2, text))
    for text in ("hi", "/start"):
        await h.deliver(BOT, msg(base + 5, text))
    await fake.wait_for(lambda f: any("Готово" in t for t in texts(f, base + 1)), timeout=5)


EXPECTED = {
    "entered ask_name": 7, "entered ask_phone": 2, "entered ask_email": 1, "entered ask_pdn": 1,
    "entered confirmed": 1, "completed confirmed": 1, "cancel ask_phone": 1, "expired ask_name": 2,
    "restart ask_name": 1, "left ask_name by name_ok": 2, "left ask_phone by phone_ok": 1,
    "left ask_email by email_ok": 1, "left ask_pdn by pdn_yes_button": 1, "fired name_ok": 2,
    "fired phone_ok": 1, "fired email_ok": 1, "fired pdn_yes_button": 1,
}


def doubled(expected: dict[str, int]) -> dict[str, int]:
    return {key: 2 * n for key, n in expected.items()}


@pytest.mark.parametrize("backend", ["redis", "sql"])
async def test_counts_are_exact_with_cancel_expiry_and_completion(backend: str, fake_max: FakeMax, request) -> None:  # noqa: F811
    async with serving(request, backend, fake_max.url, BOT, short_flow()) as h:
        version = h.version
        await scenario(h, fake_max, 100)
        found = await funnel(h, version)
        await h.runtime.store.sweep(time.time())  # nothing new has expired: sweeping again changes nothing
        again = await funnel(h, version)
    assert figures(found) == EXPECTED
    assert figures(again) == EXPECTED
    medians = {st["id"]: st["median_seconds"] for st in found["states"]}
    assert medians["ask_name"] is not None and medians["confirmed"] is None


async def test_counters_survive_a_restart_and_redis_losing_them(sqlite_url: str, fake_max: FakeMax,
                                                                redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        await h.bot(BOT)
        version = await h.publish(BOT, short_flow())
        await scenario(h, fake_max, 200)
    # The first app's two dialogs left open (204, 205) expire during the second run's wait: its sweep
    # counts them from what the first app stored.
    expected = {**doubled(EXPECTED), "expired ask_name": 2 * EXPECTED["expired ask_name"] + 2}
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:  # a new app over the same Redis and database
        await scenario(h, fake_max, 300)
        assert figures(await funnel(h, version)) == expected
        await until(lambda: rolled_up(h))  # the app's own rollup pass may hold the turn for a moment
        await delete_prefix(redis_prefix + ":v1:fn")  # Redis loses every counter hash and the index
        assert figures(await funnel(h, version)) == expected
        await h.deliver(BOT, msg(301, "hi"))  # Redis starts the hour again from one; the copy is not lowered
        await until(lambda: rolled_up(h))
        after = figures(await funnel(h, version))
    assert after == expected


async def test_three_replicas_on_one_redis_count_each_dialog_once(sqlite_url: str, fake_max: FakeMax,
                                                                  redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with replicas(3, sqlite_url, fake_max.url, REDIS_URL) as three:
        a = three[0]
        await a.bot(BOT)
        version = await a.publish(BOT, short_flow())
        users = list(range(400, 430))
        # every user's updates land on a different replica each turn, and all at once across users
        await asyncio.gather(*(three[u % 3].deliver(BOT, msg(u, "hi")) for u in users))
        await asyncio.gather(*(three[(u + 1) % 3].deliver(BOT, msg(u, "Иван")) for u in users if u % 2))
        await asyncio.sleep(TTL + 0.5)
        # every replica sweeps at once, and a third of the users come back on yet another replica meanwhile
        await asyncio.gather(*(r.runtime.store.sweep(time.time()) for r in three),
                             *(three[(u + 2) % 3].deliver(BOT, msg(u, "hi")) for u in users if u % 3 == 0))
        await asyncio.gather(*(r.runtime.store.sweep(time.time()) for r in three))
        reports = [await funnel(r, version) for r in three]
        await asyncio.gather(*(r.runtime.store.roll_up() for r in three))  # one of them copies
        await until(lambda: rolled_up(a))
        rolled = await funnel(a, version)
    odd = len([u for u in users if u % 2])
    back = len([u for u in users if u % 3 == 0])
    expected = {"entered ask_name": len(users) + back, "entered ask_phone": odd, "fired name_ok": odd,
                "left ask_name by name_ok": odd, "expired ask_name": len(users) - odd,
                "expired ask_phone": odd}
    for report in reports + [rolled]:
        assert figures(report) == expected


async def test_comparing_two_versions_and_csv(sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        first = await h.publish(BOT, short_flow())
        await complete(h, 501)
        second = await h.publish(BOT, short_flow())
        for user in (502, 503):
            await h.deliver(BOT, msg(user, "hi"))
        both = await funnel(h, second, compare=first)
        csv_answer = await h.api("GET", f"/api/bots/{BOT}/funnel", params={"version": second, "compare": first},
                                 headers={"Accept": "text/csv"})
    assert figures(both)["entered ask_name"] == 2 and "entered confirmed" not in figures(both)
    assert both["compare"]["version"] == first and figures(both["compare"])["completed confirmed"] == 1
    assert csv_answer.status_code == 200 and csv_answer.headers["content-type"] == "text/csv; charset=utf-8"
    rows = csv_answer.text.splitlines()
    assert rows[0].startswith("version,kind,id")
    assert f"{second},state,ask_name,,,2,,0,0,0,0,0,0," in rows
    assert any(row.startswith(f"{first},transition,pdn_yes_button,ask_pdn,confirmed,,1") for row in rows)


@pytest.mark.parametrize("query, words", [
    ({"from": "yesterday"}, "ISO 8601"),
    ({"from": "2026-12-02", "to": "2026-12-01"}, "earlier"),
    ({"from": "2020-01-01", "to": "2026-01-01"}, "at most"),
    ({"version": "x"}, "version number"),
    ({"compare": "-1"}, "version number"),
    ({"format": "xml"}, "json or csv"),
])
async def test_bad_parameters_get_a_sentence(query: dict[str, str], words: str, sqlite_url: str,
                                             fake_max: FakeMax) -> None:  # noqa: F811
    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        await h.publish(BOT, short_flow())
        answer = await h.api("GET", f"/api/bots/{BOT}/funnel", params=query)
        missing = await h.api("GET", f"/api/bots/{BOT}/funnel", params={"version": 9})
        nobot = await h.api("GET", "/api/bots/nobody/funnel")
    assert answer.status_code == 400 and words in answer.json()["message"], answer.text
    assert missing.status_code == 404 and nobot.status_code == 404


@pytest.fixture(scope="module")
def funnel_pg_url() -> Iterator[str]:
    """A PostgreSQL database of this module's own, migrated to head (the store suite has its own too)."""
    with migrated_database("bf_funnel") as url:
        yield url


async def test_two_replicas_on_one_postgresql_count_each_dialog_once(funnel_pg_url: str,
                                                                     fake_max: FakeMax) -> None:  # noqa: F811
    pg_url = funnel_pg_url
    bot = "pgfunnel" + uuid.uuid4().hex[:6]
    doc = {**short_flow(), "id": "pgreg" + uuid.uuid4().hex[:6]}
    async with replicas(2, pg_url, fake_max.url, None) as two:
        a, b = two
        await a.bot(bot)
        version = await a.publish(bot, doc)
        await b.runtime.bot_changed(bot)
        users = list(range(600, 620))
        await asyncio.gather(*(two[u % 2].deliver(bot, msg(u, "hi")) for u in users))
        await asyncio.gather(*(two[(u + 1) % 2].deliver(bot, msg(u, "Иван")) for u in users if u % 2))
        await asyncio.sleep(TTL + 0.5)
        await asyncio.gather(*(r.runtime.store.sweep(time.time()) for r in two),
                             *(two[u % 2].deliver(bot, msg(u, "hi")) for u in users if u % 3 == 0))
        await asyncio.gather(*(r.runtime.store.sweep(time.time()) for r in two))
        reports = [await funnel(r, version, bot) for r in two]
    odd = len([u for u in users if u % 2])
    back = len([u for u in users if u % 3 == 0])
    expected = {"entered ask_name": len(users) + back, "entered ask_phone": odd, "fired name_ok": odd,
                "left ask_name by name_ok": odd, "expired ask_name": len(users) - odd, "expired ask_phone": odd}
    for report in reports:
        assert figures(report) == expected
