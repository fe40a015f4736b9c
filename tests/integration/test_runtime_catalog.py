"""The bot/flow cache: immutable versions compiled once, bot settings refreshed without stalling webhooks."""
from __future__ import annotations

import asyncio

from server.runtime.catalog import CACHE_SECONDS, MISSING, BotInfo, Catalog
from tests.integration.runtime_app import registration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_versions_compile_once_and_bot_settings_refresh_in_the_background() -> None:
    bots = {"b": BotInfo("b", "t", "s", "registration", 1)}
    loads = {"bot": 0, "doc": 0}
    gate = asyncio.Event()
    gate.set()

    async def load_bot(bot_id: str) -> BotInfo | None:
        loads["bot"] += 1
        await gate.wait()
        return bots.get(bot_id)

    async def load_document(flow_id: str, version: int):
        loads["doc"] += 1
        return registration() if (flow_id, version) == ("registration", 1) else None

    clock = Clock()
    catalog = Catalog(load_bot, load_document, clock)
    first = await asyncio.gather(*(catalog.bot("b") for _ in range(10)))
    assert first == [bots["b"]] * 10 and loads["bot"] == 1  # concurrent misses share one load
    assert catalog.loaded("registration", 1) is MISSING  # not loaded yet: the caller must wait for flow()
    flows = await asyncio.gather(*(catalog.serving(bots["b"]) for _ in range(5)))
    assert flows[0] is flows[4] and flows[0].version == 1 and loads["doc"] == 1
    assert catalog.loaded("registration", 1) is flows[0]  # now answered without a wait
    assert await catalog.flow("registration", 7) is None
    assert catalog.loaded("registration", 7) is None and catalog.loaded("registration", None) is None

    bots["b"] = BotInfo("b", "t", "s", "registration", 2)
    gate.clear()  # the database is slow now
    clock.now += CACHE_SECONDS + 0.1
    stale = await asyncio.wait_for(catalog.bot("b"), 1)  # served at once while the refresh waits
    assert stale.version == 1
    gate.set()
    await asyncio.sleep(0.01)
    assert (await catalog.bot("b")).version == 2

    bots["b"] = BotInfo("b", "t", "s", "registration", 3)
    catalog.invalidate("b")  # a change made on this replica is seen by the very next update
    assert (await catalog.bot("b")).version == 3
    assert await catalog.bot("missing") is None


async def test_a_change_made_while_a_refresh_is_under_way_is_not_undone_by_it() -> None:
    """The refresh read the old settings before the change; the change must win, at once and after."""
    bots = {"b": BotInfo("b", "t", "s", "registration", 1)}
    reads: list[asyncio.Event] = []

    async def load_bot(bot_id: str) -> BotInfo | None:
        seen = bots.get(bot_id)  # read first, answer late: a slow database
        gate = asyncio.Event()
        reads.append(gate)
        await gate.wait()
        return seen

    async def load_document(flow_id: str, version: int):
        return None

    clock = Clock()
    catalog = Catalog(load_bot, load_document, clock)
    first = asyncio.ensure_future(catalog.bot("b"))
    await asyncio.sleep(0)
    reads[0].set()
    assert (await first).version == 1
    clock.now += CACHE_SECONDS + 0.1
    assert (await catalog.bot("b")).version == 1  # stale, served while a refresh reads version 1 ...
    await asyncio.sleep(0)
    bots["b"] = BotInfo("b", "t", "s", "registration", 2)
    catalog.invalidate("b")  # ... and the settings change before that refresh answers
    fresh = asyncio.ensure_future(catalog.bot("b"))
    await asyncio.sleep(0)
    assert len(reads) == 3, "the next call starts its own load rather than joining the stale one"
    reads[1].set()  # the stale refresh answers last but one
    await asyncio.sleep(0)
    reads[2].set()
    assert (await fresh).version == 2
    assert (await catalog.bot("b")).version == 2, "the stale refresh did not put version 1 back"
