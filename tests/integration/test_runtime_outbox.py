"""Commit first, then send: slow, failing or dying parts never double, lose or stall a reply."""
from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from server import metrics
from server.runtime.catalog import BotInfo, Catalog
from server.runtime.dispatch import REPLY_WAIT
from server.runtime.gauges import sample_gauges
from server.channels.max.client import MaxApiError, MaxClient
from server.channels.max.sender import MaxSender
from server.runtime.outbox import LEASE, Outbox
from server.runtime.keys import Keys, member
from server.channels.ratelimit import RateLimiter
from server.runtime.stores import TurnCommit, new_token
from server.runtime.stores.base import LOCK_MS, StoreUnavailable
from server.runtime.stores.memory import MemoryStore
from server.runtime.stores.redis import RedisStore
from tests.fakemax import FAKE_TOKEN, FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, registration, running, serving, texts
from tests.integration.runtime_support import REDIS_URL, redis_prefix, sqlite_url  # noqa: F401

BOT = "outbot"
HELLO = "Привет! Как вас зовут?"
ASK_PHONE = "Введите телефон в формате +7XXXXXXXXXX"


def unknown_outcomes(bot: str) -> float:
    return metrics.REGISTRY.get_sample_value("botflow_replies_total", {"bot": bot, "result": "unknown_outcome"}) or 0.0


def in_flight(fake: FakeMax) -> bool:
    """A message call reached the fake MAX and has no answer yet."""
    return any(call["path"] == "/messages" and call["status"] is None for call in fake.calls)


def reply(user: int, text: str) -> dict:
    return {"id": new_token(), "op": "send", "chat_id": user + 1_000_000, "user_id": None, "text": text,
            "buttons": [], "queued": time.time()}


async def test_a_redelivery_of_a_committed_update_sends_nothing_while_max_is_slow(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as a, running(sqlite_url, fake_max.url, REDIS_URL) as b:
        await a.bot(BOT)
        await a.publish(BOT, registration())
        fake_max.delay_next(1, 3.0, "/messages")
        update = msg(7001, "/start")
        first = asyncio.create_task(a.deliver(BOT, update))
        await fake_max.wait_for(in_flight, timeout=5)  # committed, its send on the way
        assert (await b.deliver(BOT, update)).status_code == 200  # MAX redelivers to another replica
        assert (await first).status_code == 200
        await asyncio.sleep(0.5)  # a second send, if any, would follow right away
    assert texts(fake_max, 7001) == [HELLO]


async def test_a_slow_send_holds_no_lock_and_later_replies_keep_their_order(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        fake_max.delay_next(1, 3.0, "/messages")
        first = asyncio.create_task(h.deliver(BOT, msg(7002, "/start")))
        await fake_max.wait_for(in_flight, timeout=5)
        # The first reply is on its way to MAX; the user's next update runs and commits meanwhile.
        assert (await h.deliver(BOT, msg(7002, "Иван"))).status_code == 200
        session = (await h.api("GET", f"/api/bots/{BOT}/users/7002/session")).json()
        assert session["state"] == "ask_phone" and texts(fake_max, 7002) == []
        assert (await first).status_code == 200
        await fake_max.wait_for(lambda f: len(texts(f, 7002)) == 2, timeout=10)
    assert texts(fake_max, 7002) == [HELLO, ASK_PHONE]


async def test_an_unexpected_failure_acknowledging_sends_keeps_the_acks_and_the_chain_goes_on(
        request: pytest.FixtureRequest, fake_max: FakeMax, monkeypatch) -> None:  # noqa: F811
    async with serving(request, "redis", fake_max.url, BOT, registration()) as h:
        store = h.runtime.store
        real, failures = store.outbox_acks, []

        async def once_broken(acks, *rest):
            if not failures:
                failures.append(acks)
                raise RuntimeError("an error no store should raise")
            return await real(acks, *rest)

        monkeypatch.setattr(store, "outbox_acks", once_broken)
        assert (await h.deliver(BOT, msg(7003, "/start"))).status_code == 200
        assert (await h.deliver(BOT, msg(7003, "Иван"))).status_code == 200
        # Dropped, the first ack would have left the user's queue claimed and renewed forever: the
        # second reply, queued behind the first, would never leave.
        await fake_max.wait_for(lambda f: len(texts(f, 7003)) == 2, timeout=10)
    assert failures and texts(fake_max, 7003) == [HELLO, ASK_PHONE]


def refused_while(down: list[bool], call: Any) -> Any:
    """`call` (a store method), failing as an unreachable store while `down[0]` is true."""
    async def maybe(*args: Any) -> Any:
        if down[0]:
            raise StoreUnavailable("redis is restarting")
        return await call(*args)
    return maybe


async def test_a_queue_this_replica_claims_again_after_an_outage_keeps_sending(
        request: pytest.FixtureRequest, fake_max: FakeMax, monkeypatch) -> None:  # noqa: F811
    """Acks pending from before an outage belong to a claim that lapsed; when this replica's own poller
    claims the queue again and resends, the new chain's ack must not be filed under the old owner."""
    async with serving(request, "redis", fake_max.url, BOT, registration()) as h:
        store, down = h.runtime.store, [True]
        for name in ("outbox_acks", "outbox_hold"):
            monkeypatch.setattr(store, name, refused_while(down, getattr(store, name)))
        assert (await h.deliver(BOT, msg(7004, "/start"))).status_code == 200  # sent; its ack cannot land
        # The claim lapses while the store is away, and this replica's poller takes the queue again.
        await store.client.call("ZADD", store.keys.outq, "0", member(BOT, "7004"))
        await fake_max.wait_for(lambda f: len(texts(f, 7004)) == 2, timeout=10)  # resent: outcome unknown
        down[0] = False
        assert (await h.deliver(BOT, msg(7004, "Иван"))).status_code == 200
        await fake_max.wait_for(lambda f: len(texts(f, 7004)) == 3, timeout=10)
    assert texts(fake_max, 7004) == [HELLO, HELLO, ASK_PHONE]


async def test_replies_committed_by_a_replica_that_died_are_sent_by_another(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        await h.bot(BOT)
        # A replica committed a turn with two replies and died before sending them: nobody renews its claim.
        dead = RedisStore(REDIS_URL, prefix=redis_prefix)
        token = new_token()
        loaded = await dead.begin(BOT, "7003", token)
        write = TurnCommit(None, outbox=[reply(7003, "first"), reply(7003, "second")], outbox_lease=LEASE)
        assert await dead.commit(BOT, "7003", token, write, loaded) is not None
        await dead.close()
        before = unknown_outcomes(BOT)
        await fake_max.wait_for(lambda f: len(texts(f, 7003)) == 2, timeout=LEASE + 5)
    assert texts(fake_max, 7003) == ["first", "second"]
    # The dead replica may have sent the head before dying: the take-over counts it as unknown.
    assert unknown_outcomes(BOT) == before + 1


async def test_a_lock_left_by_a_crashed_replica_is_taken_over(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        crashed = RedisStore(REDIS_URL, prefix=redis_prefix)
        assert (await crashed.begin(BOT, "7004", new_token())).status == 0  # held, never released
        await crashed.close()
        started = time.monotonic()
        # Within the dispatcher's wait for a busy lock (10 s), the 5 s lock lapses: a 200, not a 503.
        assert (await h.deliver(BOT, msg(7004, "/start"))).status_code == 200
        assert time.monotonic() - started <= LOCK_MS / 1000 + 2
        await fake_max.wait_for(lambda f: texts(f, 7004), timeout=5)
    assert texts(fake_max, 7004) == [HELLO]


async def test_two_replicas_share_one_rate_for_a_bot(sqlite_url: str, fake_max: FakeMax, redis_prefix: str,
                                                     monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    rate = 5
    async with (running(sqlite_url, fake_max.url, REDIS_URL, max_rate=rate) as a,
                running(sqlite_url, fake_max.url, REDIS_URL, max_rate=rate) as b):
        await a.bot(BOT)
        await a.publish(BOT, registration())
        users = range(7100, 7120)
        await asyncio.gather(*((a if u % 2 else b).deliver(BOT, msg(u, "/start")) for u in users))
        await fake_max.wait_for(lambda f: len(f.requests("POST", "/messages")) == len(users), timeout=15)
    times = sorted(call["time"] for call in fake_max.requests("POST", "/messages"))
    busiest = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    # Each replica alone would allow `rate` calls a second, 2 × rate together; sharing keeps one rate
    # (one more call may fall into a window through scheduling jitter at its edges).
    assert busiest <= rate + 1, f"{busiest} calls within one second at a shared rate of {rate}/s"
    assert times[-1] - times[0] >= (len(users) - 1) / rate - 0.5


async def test_one_turns_messages_keep_the_bots_rate_without_falling_behind_it(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    rate, count = 10, 8
    burst = registration()
    burst["states"][0]["say"] = [{"text": f"part {n}"} for n in range(count)]
    async with running(sqlite_url, fake_max.url, REDIS_URL, max_rate=rate) as h:
        await h.bot(BOT)
        await h.publish(BOT, burst)
        assert (await h.deliver(BOT, msg(7200, "/start"))).status_code == 200
        await fake_max.wait_for(lambda f: len(texts(f, 7200)) == count, timeout=15)
    assert texts(fake_max, 7200) == [f"part {n}" for n in range(count)]
    times = [call["time"] for call in fake_max.requests("POST", "/messages")]
    # The store reserves the turn's slots one interval apart when it commits. A slot taken as a delay
    # from the previous send instead drifts further behind with every message: 1 + 2 + ... + 7
    # intervals (2.8 s) for the last one, not 7 (0.7 s).
    assert times[-1] - times[0] < (count - 1) / rate + 0.7, [round(t - times[0], 2) for t in times]


@pytest.mark.parametrize("redis", [False, True])
async def test_a_slow_max_delays_the_webhooks_answer_by_the_reply_wait_not_by_every_send(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch, redis: bool) -> None:  # noqa: F811
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    count = 4
    burst = registration()
    burst["states"][0]["say"] = [{"text": f"part {n}"} for n in range(count)]
    async with running(sqlite_url, fake_max.url, REDIS_URL if redis else None) as h:
        await h.bot(BOT)
        await h.publish(BOT, burst)
        fake_max.set_slow(1.5, "/messages")  # 6 s for the four sends
        try:
            started = time.monotonic()
            assert (await h.deliver(BOT, msg(7300, "/start"))).status_code == 200
            answered = time.monotonic() - started
            await fake_max.wait_for(lambda f: len(texts(f, 7300)) == count, timeout=20)
        finally:
            fake_max.set_slow(0, "/messages")
    assert texts(fake_max, 7300) == [f"part {n}" for n in range(count)]
    # The replies are committed before the answer, so it need not wait for MAX beyond REPLY_WAIT (2 s).
    assert answered < REPLY_WAIT + 1.4, answered


async def test_a_send_with_an_unknown_outcome_is_counted_and_not_repeated(fake_max: FakeMax) -> None:  # noqa: F811
    store = MemoryStore()
    bot = BotInfo("unknownbot", FAKE_TOKEN, "s", None, None)

    async def load_bot(bot_id: str) -> BotInfo | None:
        return bot if bot_id == bot.id else None

    async def no_document(flow_id: str, version: int) -> None:
        return None

    async with MaxClient(fake_max.url, rate=None, timeout=0.3) as client:
        outbox = Outbox(store, Catalog(load_bot, no_document), MaxSender(client), None, RateLimiter(100))  # type: ignore[arg-type]
        token = new_token()
        loaded = await store.begin(bot.id, "7005", token)
        items = [reply(7005, "slow"), reply(7005, "next")]
        first = await store.commit(bot.id, "7005", token, TurnCommit(None, outbox=items), loaded)
        fake_max.delay_next(1, 1.0, "/messages")  # MAX answers after the client stopped waiting
        before = unknown_outcomes(bot.id)
        await outbox.start(bot, "7005", token, first, wait=5)
        await asyncio.sleep(1.2)
    # The slow one reached MAX once and was not sent again; the next one followed it.
    assert texts(fake_max, 7005) == ["slow", "next"]
    assert unknown_outcomes(bot.id) == before + 1
    assert await store.outbox_head(bot.id, "7005") is None


async def test_hostile_bodies_get_a_400_never_a_500(sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    nested = "[" * 10000 + "]" * 10000
    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        await h.deliver(BOT, msg(7006, "/start"))
        headers = {"X-Max-Bot-Api-Secret": "hook_secret-123", "Content-Type": "application/json"}
        hook = await h.client.post(f"/webhooks/max/{BOT}", content=nested, headers=headers)
        assert hook.status_code == 400 and "nested too deeply" in hook.json()["message"]
        deep_event = '{"name": "x", "payload": {"a": ' + nested + "}}"
        for body in (nested, deep_event, "{", '"just a string"'):
            event = await h.api("POST", f"/api/bots/{BOT}/users/7006/events", content=body,
                                headers={"Content-Type": "application/json"})
            assert 400 <= event.status_code < 500, (body[:20], event.status_code, event.text)


async def test_the_store_and_the_limiter_reserve_slots_on_one_schedule_per_bot(redis_prefix: str) -> None:  # noqa: F811
    rate = 10  # a slot every 100 ms
    store = RedisStore(REDIS_URL, prefix=redis_prefix, send_rate=rate)
    limiter = RateLimiter(rate, redis=store.client, prefix=Keys(redis_prefix).rate)
    try:
        waits = []
        for user in ("1", "2", "3"):
            token = new_token()
            loaded = await store.begin("ratebot", user, token)
            asked = time.monotonic()
            first = await store.commit("ratebot", user, token, TurnCommit(None, outbox=[reply(int(user), "x")]), loaded)
            waits.append(round(first.slot_at - asked, 3))
        started = time.monotonic()
        await limiter.acquire("ratebot")  # the fourth slot of the same schedule
        waited = time.monotonic() - started
    finally:
        await store.close()
    assert 0 <= waits[0] <= 0.02 and 0.08 <= waits[1] <= 0.12 and 0.18 <= waits[2] <= 0.22
    assert waited >= 0.25


async def test_gauges_and_webhook_counts_reach_the_registry(sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    def webhooks(status: str) -> float:
        return metrics.REGISTRY.get_sample_value("botflow_webhook_requests_total",
                                                 {"bot": BOT, "status": status}) or 0.0

    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        ok, bad = webhooks("200"), webhooks("403")
        fake_max.set_down(True)  # the reply waits in the outbox
        assert (await h.deliver(BOT, msg(7007, "/start"))).status_code == 200
        assert (await h.deliver(BOT, msg(7007, "x"), secret="wrong")).status_code == 403
        await sample_gauges(h.runtime.store, now=time.time() + 3)
        depth = metrics.REGISTRY.get_sample_value("botflow_outbox_depth")
        oldest = metrics.REGISTRY.get_sample_value("botflow_outbox_oldest_seconds")
        dialogs = metrics.REGISTRY.get_sample_value("botflow_dialogs", {"bot": BOT, "version": "1"})
        fake_max.set_down(False)
    assert (webhooks("200"), webhooks("403")) == (ok + 1, bad + 1)
    assert depth == 1 and oldest >= 3 and dialogs == 1


async def _queue(store: MemoryStore, bot: BotInfo, user: int, texts_: list[str]):
    token = new_token()
    loaded = await store.begin(bot.id, str(user), token)
    return token, await store.commit(bot.id, str(user), token, TurnCommit(None, outbox=[reply(user, t) for t in texts_]),
                                     loaded)


async def test_a_busy_user_takes_one_rate_slot_at_a_time_so_others_are_not_starved(fake_max: FakeMax) -> None:  # noqa: F811
    store = MemoryStore()
    bot = BotInfo("fairbot", FAKE_TOKEN, "s", None, None)

    async def load_bot(bot_id: str) -> BotInfo | None:
        return bot

    async def no_document(flow_id: str, version: int) -> None:
        return None

    async with MaxClient(fake_max.url, rate=None) as client:
        outbox = Outbox(store, Catalog(load_bot, no_document), MaxSender(client), None, RateLimiter(20))  # type: ignore[arg-type]
        busy_token, busy = await _queue(store, bot, 7200, [f"busy {n}" for n in range(10)])
        quiet_token, quiet = await _queue(store, bot, 7201, ["quiet"])
        await asyncio.gather(outbox.start(bot, "7200", busy_token, busy, wait=5),
                             outbox.start(bot, "7201", quiet_token, quiet, wait=5))
    order = [m["text"] for m in fake_max.sent_messages()]
    assert sorted(order) == sorted([f"busy {n}" for n in range(10)] + ["quiet"])
    assert order.index("quiet") <= 2, order  # not behind all ten of the busy user's replies
    assert [t for t in order if t.startswith("busy")] == [f"busy {n}" for n in range(10)]


async def test_a_429_with_retry_after_holds_every_send_of_that_bot(fake_max: FakeMax) -> None:  # noqa: F811
    store = MemoryStore()
    bot = BotInfo("holdbot", FAKE_TOKEN, "s", None, None)
    refused = []

    async def load_bot(bot_id: str) -> BotInfo | None:
        return bot

    async def no_document(flow_id: str, version: int) -> None:
        return None

    async with MaxClient(fake_max.url, rate=None) as client:
        sender = MaxSender(client)

        async def send(bot_: BotInfo, item: dict) -> None:
            if not refused:  # MAX: too many requests, come back in a second
                refused.append(time.monotonic())
                raise MaxApiError(429, "too.many.requests", "slow down", True, retry_after=1.0)
            await sender(bot_, item)

        outbox = Outbox(store, Catalog(load_bot, no_document), send, None, RateLimiter(1000))  # type: ignore[arg-type]
        first_token, first = await _queue(store, bot, 7300, ["refused first"])
        await outbox.start(bot, "7300", first_token, first, wait=5)
        other_token, other = await _queue(store, bot, 7301, ["another user"])
        await outbox.start(bot, "7301", other_token, other, wait=5)
        sent_at = time.monotonic()
    assert sent_at - refused[0] >= 0.9  # the other user's send waited out the bot's Retry-After
    assert [m["text"] for m in fake_max.sent_messages()] == ["another user"]
    assert (await store.outbox_head(bot.id, "7300"))["text"] == "refused first"  # queued for its retry
