"""Fenced sends: a sender calls MAX only while its claim on the user's outbox is proved its own."""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from server import metrics
from server.runtime import outbox as outbox_module
from server.runtime.catalog import BotInfo, Catalog
from server.runtime.outbox import Outbox
from server.channels.ratelimit import RateLimiter
from server.runtime.stores import TurnCommit, new_token
from server.db.engine import make_engine
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.redis import RedisStore
from server.runtime.stores.sql import sql_store
from tests.integration.runtime_support import REDIS_URL, redis_prefix, sqlite_url  # noqa: F401 (fixtures)
from tests.integration.stores.suite import begin_waiting, dialog

BOT = "fencebot"
INFO = BotInfo(BOT, "token", None, None, None)


def unknown_outcomes() -> float:
    return metrics.REGISTRY.get_sample_value("botflow_replies_total", {"bot": BOT, "result": "unknown_outcome"}) or 0.0


def events(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [getattr(r, "event", "") for r in caplog.records]


async def the_bot(bot_id: str) -> BotInfo | None:
    return INFO if bot_id == BOT else None


async def no_documents(bot_id: str, version: int) -> None:
    return None


def make_outbox(store: Any, send: Any) -> Outbox:
    return Outbox(store, Catalog(the_bot, no_documents), send, None, RateLimiter(1000.0))  # type: ignore[arg-type]


async def test_a_sender_paused_past_its_claim_makes_no_further_call(
        redis_prefix: str, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    """The pause lands inside the first call (as a SIGSTOP would): that call is counted as an unknown
    outcome, the next two are never made, and the new claimer is left exactly the two unsent replies."""
    store = RedisStore(REDIS_URL, prefix=redis_prefix)
    calls: list[str] = []
    release = asyncio.Event()

    async def send(bot: BotInfo, item: dict[str, Any]) -> None:
        calls.append(item["id"])
        if len(calls) == 1:
            await release.wait()

    box = make_outbox(store, send)
    try:
        token = new_token()
        loaded = await begin_waiting(store, BOT, "1", token)
        items = [{"id": f"m{n}", "op": "send", "text": str(n), "user_id": 1} for n in range(3)]
        # A lease this short runs out while the first call is held (the commit's proof: lease - 1.25 s).
        first = await store.commit(BOT, "1", token, TurnCommit(dialog("s"), outbox=items, outbox_lease=1.5), loaded)
        assert first is not None
        before = unknown_outcomes()
        with caplog.at_level(logging.INFO, logger="botflow.runtime.outbox"):
            sending = asyncio.ensure_future(box.start(INFO, "1", token, first, wait=0))
            await asyncio.sleep(0.4)
            # Meanwhile the claim lapsed on the store and another replica took the queue over.
            claims = await store.outbox_claim(time.time() + 10, 5, "other")
            assert [(c.user, c.taken_over) for c in claims if c.bot == BOT] == [("1", True)]
            release.set()
            await sending
            for _ in range(50):
                if not box.working and not box._tasks:
                    break
                await asyncio.sleep(0.02)
        assert calls == ["m0"]
        assert unknown_outcomes() - before == 1
        assert "send_past_claim" in events(caplog) and "send_fenced" in events(caplog)
        # The late word that m0 went out still reached the store: the new claimer starts at m1.
        assert (await store.outbox_head(BOT, "1"))["id"] == "m1"
        assert (await store.outbox_done(BOT, "1", "m1", "other")).item["id"] == "m2"
    finally:
        await box.stop(0.1)
        await store.close()


async def test_a_sender_whose_claim_is_still_its_own_goes_on_after_asking_once(redis_prefix: str) -> None:  # noqa: F811
    """A proof that ran out (a long wait) is renewed by one question to the store, and the sends go on."""
    store = RedisStore(REDIS_URL, prefix=redis_prefix)
    calls: list[str] = []

    async def send(bot: BotInfo, item: dict[str, Any]) -> None:
        calls.append(item["id"])
        if len(calls) == 1:
            await asyncio.sleep(0.4)

    box = make_outbox(store, send)
    holds: list[Any] = []
    real_hold = store.outbox_hold

    async def counted_hold(*args: Any) -> Any:
        holds.append(args)
        return await real_hold(*args)

    store.outbox_hold = counted_hold  # type: ignore[method-assign]
    try:
        token = new_token()
        loaded = await begin_waiting(store, BOT, "2", token)
        items = [{"id": f"n{n}", "op": "send", "text": str(n), "user_id": 2} for n in range(2)]
        first = await store.commit(BOT, "2", token, TurnCommit(dialog("s"), outbox=items, outbox_lease=1.5), loaded)
        assert first is not None
        await box.start(INFO, "2", token, first, wait=0)
        for _ in range(100):
            if calls == ["n0", "n1"] and not box.working:
                break
            await asyncio.sleep(0.02)
        assert calls == ["n0", "n1"]
        assert len(holds) == 1  # the one extra round trip, made only because the proof ran out
        assert await store.outbox_head(BOT, "2") is None
    finally:
        await box.stop(0.1)
        await store.close()


async def test_a_claim_that_lapsed_while_redis_was_silent_waits_for_its_holder(redis_prefix: str) -> None:  # noqa: F811
    """No poller came by for longer than POLL_GAP_MS (Redis away, or restarted): a lapsed claim is not
    taken over for a grace, so its holder renews it and records what it sent; retries are not held up."""
    store = RedisStore(REDIS_URL, prefix=redis_prefix)
    try:
        token = new_token()
        loaded = await begin_waiting(store, BOT, "3", token)
        now = time.time()
        item = {"id": "g0", "op": "send", "text": "hi", "user_id": 3}
        assert await store.commit(BOT, "3", token, TurnCommit(dialog("s"), outbox=[item], outbox_lease=5), loaded)
        mine = lambda found: [c.user for c in found if c.bot == BOT]  # noqa: E731
        assert mine(await store.outbox_claim(now, 1, "other")) == []
        await asyncio.sleep(2.2)  # the silence
        assert mine(await store.outbox_claim(now + 9, 1, "other")) == []  # lapsed, but within the grace
        assert await store.outbox_hold([(BOT, "3")], token, now + 20) == [(BOT, "3")]  # the holder is back
        assert await store.outbox_done(BOT, "3", "g0", token) is None  # ... and records its send
        assert await store.outbox_head(BOT, "3") is None
        await asyncio.sleep(1.1)
        token = new_token()
        loaded = await begin_waiting(store, BOT, "4", token)
        assert await store.commit(BOT, "4", token, TurnCommit(dialog("s"), outbox=[item], outbox_lease=5), loaded)
        assert mine(await store.outbox_claim(now + 30, 1, "other")) == ["4"]  # the grace is over
    finally:
        await store.close()


async def test_a_webhook_action_whose_claim_lapsed_before_its_post_is_left_to_the_next_claimer(
        redis_prefix: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    store = RedisStore(REDIS_URL, prefix=redis_prefix)
    posted: list[str] = []
    box = make_outbox(store, None)

    async def post(url: str, data: Any) -> Any:
        posted.append(url)
        raise AssertionError("posted after its claim lapsed")

    real_due = store.actions_due

    async def paused_due(*args: Any) -> Any:
        found = await real_due(*args)
        await asyncio.sleep(0.2)  # the process stops right after the claim came back
        return found

    monkeypatch.setattr(box, "post_action", post)
    monkeypatch.setattr(store, "actions_due", paused_due)
    monkeypatch.setattr(outbox_module, "ACTION_LEASE", 1.3)  # proof: lease - 1.25 s, shorter than the pause
    try:
        token = new_token()
        loaded = await begin_waiting(store, BOT, "5", token)
        action = {"id": new_token(), "bot": BOT, "user": "5", "url": "http://example.invalid/hook", "data": {}}
        await store.commit(BOT, "5", token, TurnCommit(dialog("s"), actions=[action]), loaded)
        with caplog.at_level(logging.INFO, logger="botflow.runtime.outbox"):
            await box.pass_once()
            await asyncio.sleep(0.05)
        assert posted == [] and "action_fenced" in events(caplog)
    finally:
        await box.stop(0.1)
        await store.close()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_a_send_that_went_out_while_the_store_was_away_is_recorded_and_never_repeated(
        kind: str, sqlite_url: str, redis_prefix: str) -> None:  # noqa: F811
    """The store fails right after MAX took a reply (its ack cannot land) and stays away past the claim's
    lease; once it answers, the ack is recorded before any poller takes the queue over, so the reply
    goes out once."""
    engine = make_engine(sqlite_url) if kind == "sqlite" else None
    store: Any = sql_store(engine) if engine is not None else RedisStore(REDIS_URL, prefix=redis_prefix)
    calls: list[str] = []
    down = [False]

    async def send(bot: BotInfo, item: dict[str, Any]) -> None:
        calls.append(item["id"])
        down[0] = True  # MAX took it; the store goes away before the ack

    def failing(call: Any) -> Any:
        async def maybe(*args: Any, **kwargs: Any) -> Any:
            if down[0]:
                raise StoreUnavailable("the store is away")
            return await call(*args, **kwargs)
        return maybe

    for name in ("outbox_done", "outbox_acks", "outbox_hold", "outbox_claim", "actions_due"):
        setattr(store, name, failing(getattr(store, name)))
    box = make_outbox(store, send)
    try:
        token = new_token()
        loaded = await begin_waiting(store, BOT, "6", token)
        item = {"id": "s0", "op": "send", "text": "0", "user_id": 6}
        first = await store.commit(BOT, "6", token, TurnCommit(dialog("s"), outbox=[item], outbox_lease=1.5), loaded)
        assert first is not None
        await box.start(INFO, "6", token, first, wait=0)
        for _ in range(50):
            if down[0]:
                break
            await asyncio.sleep(0.02)
        for _ in range(4):  # pollers fail meanwhile, and the claim lapses on the store's clock
            with pytest.raises(StoreUnavailable):
                await box.pass_once()
        await asyncio.sleep(1.6)
        down[0] = False
        for _ in range(20):  # the store is back: pollers and the pending ack race
            await box.pass_once()
            await asyncio.sleep(0.05)
            if down[0]:  # a second send took the store away again
                break
        assert calls == ["s0"]
        assert await store.outbox_head(BOT, "6") is None and not box.working
    finally:
        await box.stop(0.5)
        await store.close()
        if engine is not None:
            await engine.dispose()
