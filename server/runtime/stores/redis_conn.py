"""What every part of the Redis store shares: the client, the key names, the clock and the timeline database."""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, TypeVar

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.channels.ratelimit import interval_ms
from server.runtime.keys import Keys
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.resp import Client, RedisError, Script

T = TypeVar("T")


def refused(exc: RedisError) -> StoreUnavailable:
    """An error reply (LOADING, READONLY, OOM...) as the store's own failure, which callers answer 503."""
    return StoreUnavailable(f"redis refused the call: {exc}")


@contextmanager
def database_answers() -> Iterator[None]:
    """The timeline database's failures as the store's own: the caller answers 503, not 500."""
    try:
        yield
    except (DBAPIError, OSError, TimeoutError) as exc:
        raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc


class RedisConn:
    """One connection, one key layout and one clock, shared by the Redis store's parts."""

    def __init__(self, client: Client, keys: Keys, clock: Callable[[], float] = time.time,
                 send_rate: float | None = None, timeline_db: AsyncEngine | None = None) -> None:
        self.client = client
        self.keys = keys
        self.clock = clock
        # Each bot's send interval (RateLimiter's shared schedule): as the scripts' argument ("" none), in s.
        self.interval: int | str = interval_ms(send_rate) if send_rate is not None else ""
        self.interval_s = 1.0 / send_rate if send_rate is not None else 0.0
        self.rate_ms = float(self.interval) if send_rate is not None else None  # COMMIT's `rate_ms`
        # The database timeline records and funnel counters are moved to; None keeps them in Redis only.
        self.timeline_db = timeline_db

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """Run a Lua script; an error reply is the store's own failure, as every other."""
        try:
            return await self.client.run(script, keys, args)
        except RedisError as exc:  # LOADING, READONLY, OOM...
            raise refused(exc) from exc

    async def call(self, *args: Any) -> Any:
        """One Redis command."""
        try:
            return await self.client.call(*args)
        except RedisError as exc:
            raise refused(exc) from exc

    async def call_at(self, key: Any, *args: Any) -> Any:
        """A command naming no key (SCAN) on the node holding `key`'s slot (or on that node, given one): in a
        cluster; else on the one Redis."""
        at = getattr(self.client, "call_at", None)
        try:
            return await (at(key, *args) if at is not None else self.client.call(*args))
        except RedisError as exc:
            raise refused(exc) from exc

    async def db(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T | int:
        """Run `work(conn)` in a transaction of the timeline database (none: 0)."""
        if self.timeline_db is None:
            return 0
        with database_answers():
            async with self.timeline_db.begin() as conn:
                return await work(conn)

    async def awaited(self, awaitable: Awaitable[T]) -> T:
        """A database call made elsewhere, its failures turned into StoreUnavailable."""
        with database_answers():
            return await awaitable

    async def scan(self, pattern: str, at: Any = None) -> AsyncIterator[bytes]:
        """Every key matching `pattern`, SCAN by SCAN (never KEYS): in a cluster, on the node holding `at`'s
        slot, or on every master when `at` is None."""
        masters = getattr(self.client, "masters", None)
        for node in [at] if at is not None or masters is None else await masters():
            cursor = b"0"
            while True:
                cursor, found = await (self.call_at(node, "SCAN", cursor, "MATCH", pattern, "COUNT", 500)
                                       if node is not None else self.call("SCAN", cursor, "MATCH", pattern, "COUNT", 500))
                for key in found:
                    yield key
                if cursor in (b"0", 0):
                    break
