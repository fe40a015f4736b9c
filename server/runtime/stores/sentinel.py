"""Redis behind Sentinel: the master's address asked of the sentinels (redis-py's Sentinel support), our
pipelined client connected to it, and a failover followed.

`redis+sentinel://[:password@]host:port[,host:port...]/master-name[/db]`. The master is asked for on every
new connection, and every FOLLOW_EVERY seconds while connected; a connection that fails, a master that
answers READONLY (it was demoted) or a sentinel naming another master drops the connection, so the next
call connects to the master the sentinels name now. Calls in between fail as StoreUnavailable (webhooks
answer 503 and MAX delivers again).
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable
from urllib.parse import quote

from server.redis_urls import SCHEME, parse
from server.redis_urls import cluster_nodes as cluster_url_nodes
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.resp import RedisError, RespClient, Script, _Connection

log = logging.getLogger("botflow.runtime.store")

FOLLOW_EVERY = 1.0  # seconds between asking the sentinels whether the master moved
ASK_TIMEOUT = 0.5  # seconds a sentinel may take to answer


class SentinelClient(RespClient):
    """The pipelined client, pointed at whatever master the sentinels name."""

    def __init__(self, url: str, timeout: float = 5.0, connect_timeout: float | None = None) -> None:
        from redis.asyncio.sentinel import Sentinel

        sentinels, self.master_name, db, password = parse(url)
        auth = f":{quote(password, safe='')}@" if password else ""
        super().__init__(f"redis://{auth}127.0.0.1:0/{db}", timeout, connect_timeout)
        self.sentinel = Sentinel(sentinels, socket_timeout=ASK_TIMEOUT, socket_connect_timeout=ASK_TIMEOUT)
        self.address: tuple[str, int] | None = None  # the master connected to last
        self.on_move: Callable[[str], None] | None = None  # told when the master changed (`stores.lost`)
        self.moves = 0  # master changes followed
        self._follower: asyncio.Task[None] | None = None

    async def master(self) -> tuple[str, int]:
        """The master's address as the sentinels name it now."""
        from redis.exceptions import RedisError as PyRedisError

        try:
            host, port = await self.sentinel.discover_master(self.master_name)
        except (PyRedisError, OSError, TimeoutError) as exc:
            raise StoreUnavailable(f"no sentinel names a master {self.master_name!r}: {exc}") from None
        return str(host), int(port)

    async def _connect(self) -> _Connection:
        address = await self.master()
        if address != (self.host, self.port) or self._conn is None or self._conn.closed:
            self.host, self.port = address
        conn = await super()._connect()
        if self.address is not None and address != self.address:
            log.warning("Redis master %r moved from %s:%d to %s:%d; following it", self.master_name,
                        *self.address, *address, extra={"event": "redis_failover", "outcome": "followed"})
            self.moves += 1
            if self.on_move is not None:
                self.on_move("failover")
        self.address = address
        if self._follower is None or self._follower.done():
            self._follower = asyncio.create_task(self._follow())
        return conn

    async def confirm_master(self) -> None:
        """StoreUnavailable (and the connection dropped) unless the sentinels still name the master we
        are connected to: asked before what it answers may be taken for lost data."""
        address = await self.master()
        if address != self.address:
            self._drop(f"the sentinels name another master for {self.master_name!r}")
            raise StoreUnavailable(f"the sentinels name another master for {self.master_name!r}")

    def _drop(self, why: str) -> None:
        conn = self._conn
        if conn is not None and not conn.closed:
            conn.fail(StoreUnavailable(why))

    async def _follow(self) -> None:
        """While connected, ask the sentinels every FOLLOW_EVERY s; a master moved drops the connection."""
        while True:
            await asyncio.sleep(FOLLOW_EVERY)
            if self._conn is None or self._conn.closed:
                continue
            try:
                address = await self.master()
            except StoreUnavailable:
                continue  # the sentinels away: keep the master we have
            if address != self.address:
                self._drop(f"the sentinels name another master for {self.master_name!r}")

    async def _reconnect(self) -> None:
        """Connect; the calls that waited for a connection to a master that moved fail (503, MAX delivers
        again): each was decided before the failover, and the turns after it wait for the replicas to
        share what they wrote (`stores.turn_marks`)."""
        moves = self.moves
        await self._connect()
        if self.moves != moves:
            raise StoreUnavailable(f"the Redis master {self.master_name!r} moved; calls go on after the failover")

    async def call(self, *args: Any) -> Any:
        if self._conn is None or self._conn.closed:
            await self._reconnect()
        try:
            return await super().call(*args)
        except RedisError as exc:
            self._demoted(exc)
            raise

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        if self._conn is None or self._conn.closed:
            await self._reconnect()
        try:
            return await super().run(script, keys, args)
        except RedisError as exc:
            self._demoted(exc)
            raise

    def _demoted(self, exc: RedisError) -> None:
        if str(exc).startswith("READONLY"):  # a replica now: the next call asks the sentinels again
            self._drop("the Redis master was demoted to a replica")

    async def close(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
            self._follower = None
        await super().close()
        for each in self.sentinel.sentinels:
            await each.aclose()


def redis_py(url: str, **options: Any) -> Any:
    """A redis-py client for `url` (pub/sub, start-up checks): a Sentinel URL gives one that follows the
    master itself."""
    from redis.asyncio import Redis

    if url.startswith("redis+cluster://"):
        # a cluster's pub/sub reaches every node: its first node serves the notifier and start-up checks
        (host, port), *_ = cluster_url_nodes(url)[0]
        return Redis(host=host, port=port, password=cluster_url_nodes(url)[1], **options)
    if not url.startswith(SCHEME + "://"):
        return Redis.from_url(url, **options)
    from redis.asyncio.sentinel import Sentinel

    sentinels, name, db, password = parse(url)
    timeout = options.get("socket_connect_timeout", ASK_TIMEOUT)
    return Sentinel(sentinels, socket_timeout=timeout, socket_connect_timeout=timeout).master_for(
        name, db=db, password=password, **options)
