"""The Redis store on a real Redis Cluster (3 masters, 3 replicas): dialogs go on through a master failover
with none lost, and a bot's keys all sit in its bucket's slot."""
from __future__ import annotations

import asyncio
import time

import pytest

from server.runtime.stores import BUSY, DUPLICATE, OK, StoreUnavailable, TurnCommit, new_token
from server.runtime.stores.redis import RedisStore
from server.runtime.stores.resp import connect
from tests.redis_cluster import LocalCluster

BOTS = [f"bot{n}" for n in range(12)]
USERS = [str(n) for n in range(5)]
TURNS = 12


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster() as made:
        yield made


async def turn(store: RedisStore, bot: str, user: str, update: int = 0) -> None:
    """One turn counting up the dialog's `n`, tried again while the store is away, as MAX redelivers an
    update: its duplicate mark keeps a commit that landed unanswered from counting twice."""
    dedupe, why, deadline = f"u{update}", None, time.monotonic() + 60
    while time.monotonic() < deadline:
        token = new_token()
        try:
            loaded = await store.begin(bot, user, token, dedupe)
            if loaded.status == DUPLICATE:
                return
            if loaded.status == BUSY:  # a lock left by a commit that went unanswered lapses
                await asyncio.sleep(loaded.retry_ms / 1000)
                continue
            assert loaded.status == OK
            n = (loaded.dialog or {}).get("data", {}).get("n", 0)
            await store.commit(bot, user, token, TurnCommit(
                {"flow": "f", "version": 1, "state": "s", "data": {"n": n + 1}, "history": [], "turn": n + 1},
                dedupe=dedupe), loaded)
            return
        except StoreUnavailable as exc:
            why = exc
            await asyncio.sleep(0.05)
    raise AssertionError(f"{bot}/{user}: the store stayed away: {why}")


async def test_every_key_of_a_bots_turn_hashes_to_its_buckets_slot(cluster: LocalCluster) -> None:
    store = RedisStore(cluster.url, prefix="slots", client=connect(cluster.url))
    try:
        assert store.keys.buckets > 1
        await turn(store, "b1", "u1")
        keys = [key async for key in store.conn.scan(store.keys.base + "*")]
        b = store.keys.of("b1")
        slots = {int(cluster.cli(cluster.ports[0], "CLUSTER", "KEYSLOT", key.decode()).strip()) for key in keys
                 if key.decode().startswith(b.base)}
        assert len(slots) == 1 and len(keys) >= 2, keys  # the dialog and the bucket's timeline at least
    finally:
        await store.close()


async def test_dialogs_go_on_through_a_master_failover_with_none_lost(cluster: LocalCluster) -> None:
    store = RedisStore(cluster.url, prefix="failover", client=connect(cluster.url))
    try:
        async def user_turns(bot: str, user: str) -> None:
            for update in range(TURNS):
                await turn(store, bot, user, update)
                await asyncio.sleep(0.02)

        running = asyncio.gather(*(user_turns(b, u) for b in BOTS for u in USERS))
        await asyncio.sleep(0.3)
        masters = [p for p in cluster.procs if cluster.role(p) == "master"]
        await asyncio.to_thread(cluster.fail_over, masters[0])  # a replica takes over, the old master follows it
        await running
        for bot in BOTS:
            for user in USERS:
                found = await store.dialog(bot, user)
                assert found is not None and found["data"]["n"] == TURNS, (bot, user, found)
        assert sum(1 for p in cluster.procs if cluster.role(p) == "master") == 3
    finally:
        await store.close()
