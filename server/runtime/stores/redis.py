"""Production store: Redis, one part per port around one shared connection (`redis_conn.RedisConn`)."""
from __future__ import annotations

import time
from typing import Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from server.runtime.keys import CLUSTER_BUCKETS, Keys
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.composed import ComposedStore
from server.runtime.stores.lost import LostWatch
from server.runtime.stores.redis_conn import RedisConn
from server.runtime.stores.redis_funnel import RedisCounters
from server.runtime.stores.redis_health import RedisHealth
from server.runtime.stores.redis_listing import RedisListing
from server.runtime.stores.redis_outbox import RedisActions, RedisOutbox
from server.runtime.stores.redis_timeline import RedisTimelines
from server.runtime.stores.redis_timers import RedisTimers
from server.runtime.stores.redis_turns import MARK_BUCKET, RedisTurns, mark
from server.runtime.stores.resp import Client, RespClient
from server.runtime.stores.written import Written

__all__ = ["MARK_BUCKET", "RedisStore", "mark"]


async def confirm_master(conn: RedisConn) -> None:
    """StoreUnavailable unless the server answering is a master (behind Sentinel: the one named now). A
    cluster client sends each key's command to its slot's master itself (and ROLE to any node)."""
    if getattr(conn.client, "cluster", False):
        return
    confirm = getattr(conn.client, "confirm_master", None)
    if confirm is not None:
        await confirm()
    role = await conn.call("ROLE")
    if role[0] != b"master":
        raise StoreUnavailable(f"the Redis server answering is a {role[0].decode()}, not the master")


class RedisStore(ComposedStore):
    """Dialogs under `<prefix>:v1:{bot:user}:*` (in a cluster `<prefix>:v1:{<prefix>:<bucket>}:{bot:user}:*`);
    timers, outbox queue and actions in sorted sets shared by the bucket's bots."""

    def __init__(self, url: str, prefix: str = "botflow", clock: Callable[[], float] = time.time,
                 client: Client | None = None, send_rate: float | None = None,
                 timeline_db: AsyncEngine | None = None, min_replicas: int = 0, buckets: int | None = None) -> None:
        """`send_rate`: each bot's calls per second; the store then reserves the slot of every send it
        hands out (RateLimiter's shared schedule, the same keys), so a send costs no round trip for it.

        `buckets`: how many buckets the bots are spread over (`keys.Keys`); by default CLUSTER_BUCKETS on a
        cluster client, none (the single Redis's layout) on any other.

        `timeline_db`: the database timeline records are moved to (`move_timeline`); without it they stay
        in the stream (tests, benchmarks), which keeps at most STREAM_MAX of them.
        """
        client = client or RespClient(url)
        if buckets is None:  # a cluster spreads its bots over buckets; a single Redis keeps its one layout
            buckets = CLUSTER_BUCKETS if getattr(client, "cluster", False) else 0
        conn = RedisConn(client, Keys(prefix, buckets), clock, send_rate, timeline_db)
        lost = LostWatch(conn.call, conn.keys.epoch, conn.keys.epoch + ":users",
                         lambda: getattr(conn.client, "connects", 0), lambda: confirm_master(conn))
        timelines, actions = RedisTimelines(conn), RedisActions(conn)
        turns = RedisTurns(conn, timelines, actions, lost)
        super().__init__(turns=turns, outbox=RedisOutbox(conn), timers=RedisTimers(conn), actions=actions,
                         timelines=timelines, counters=RedisCounters(conn), listing=RedisListing(conn),
                         health=RedisHealth(conn, lost, min_replicas))
        self.conn, self.lost = conn, lost
        self.redis_turns = turns

    # What tests and benches look into: the connection's parts and the turns' memory of their writes.
    @property
    def client(self) -> Client:
        return self.conn.client

    @property
    def keys(self) -> Keys:
        return self.conn.keys

    @property
    def clock(self) -> Callable[[], float]:
        return self.conn.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        """The app's clock, once it measured the store's (`store_clock.StoreClock`): every part reads it."""
        self.conn.clock = clock

    @property
    def timeline_db(self) -> AsyncEngine | None:
        return self.conn.timeline_db

    @property
    def written(self) -> Written:
        return self.redis_turns.written
