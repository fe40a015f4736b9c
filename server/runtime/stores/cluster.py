"""Redis Cluster: redis-py's cluster client (it follows MOVED and ASK, and a failover's new slot map) behind
the store's `Client` calls, for `redis+cluster://host:port[,host:port...]` URLs."""
from __future__ import annotations

import asyncio
from typing import Any

from server.lua_script import Script
from server.redis_urls import cluster_nodes as parse
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.resp import RedisError

# The replies redis-py parses that the cluster client itself reads (its slot map); every other reply
# reaches the store raw, as the pipelined client gives it.
_OWN_REPLIES = ("CLUSTER", "COMMAND")
# Calls in flight at once, and so connections per node at most: redis-py's async cluster client refuses a
# call beyond its pool (MaxConnectionsError) instead of queueing it, so the calls queue here.
IN_FLIGHT = 64


class ClusterClient:
    """Commands and scripts routed by their first key's slot; SCAN on the node it is asked of."""

    cluster = True  # the store then spreads its bots over buckets (`keys.CLUSTER_BUCKETS`)

    def __init__(self, url: str, timeout: float = 5.0, connect_timeout: float | None = None) -> None:
        from redis.asyncio.cluster import ClusterNode, RedisCluster

        nodes, password = parse(url)
        self.redis = RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in nodes], password=password,
                                  socket_timeout=timeout, max_connections=IN_FLIGHT,
                                  socket_connect_timeout=timeout if connect_timeout is None else connect_timeout)
        callbacks = self.redis.response_callbacks  # the same table its nodes parse with
        for name in [n for n in callbacks if not n.startswith(_OWN_REPLIES)]:
            del callbacks[name]
        self.redis.result_callbacks.pop("SCAN", None)  # one node's reply, not a merge of every node's
        self._gate: asyncio.Semaphore | None = None
        self._drawing: asyncio.Lock | None = None
        self._drawn = False

    async def _ask(self, args: tuple[Any, ...], **options: Any) -> Any:
        from redis.exceptions import (
            AuthenticationError, ClusterDownError, ConnectionError as RedisConnectionError, NoScriptError,
            RedisClusterException, ResponseError, SlotNotCoveredError, TimeoutError as RedisTimeoutError,
        )

        if self._gate is None:
            self._gate = asyncio.Semaphore(IN_FLIGHT)
        if not self._drawn:
            await self._ready()
        try:
            async with self._gate:
                return await self.redis.execute_command(*args, **options)
        except NoScriptError as exc:  # redis-py strips the NOSCRIPT word that run() looks for
            raise RedisError(f"NOSCRIPT {exc}") from exc
        except (AuthenticationError, RedisConnectionError, RedisTimeoutError, ClusterDownError,
                SlotNotCoveredError, OSError) as exc:
            raise StoreUnavailable(f"redis cluster: {exc}") from None
        except ResponseError as exc:
            raise RedisError(str(exc)) from exc
        except RedisClusterException as exc:  # no node reachable for the slot map, all retries spent
            raise StoreUnavailable(f"redis cluster: {exc}") from None
        except AttributeError as exc:
            # redis-py 8.1 writes its connection's greeting to a socket a failover just closed (its writer
            # is None by then)
            raise StoreUnavailable(f"redis cluster: connection lost ({exc})") from None

    async def call(self, *args: Any) -> Any:
        return await self._ask(args)

    async def call_at(self, where: Any, *args: Any) -> Any:
        """A command on the master holding `where`'s slot (a key), or on `where` itself (a node)."""
        if isinstance(where, str):
            await self._ready()
            where = self.redis.get_node_from_key(where)
        return await self._ask(args, target_nodes=where)

    async def masters(self) -> list[Any]:
        """Every master (what a SCAN of all keys visits)."""
        await self._ready()
        return list(self.redis.get_primaries())

    async def _ready(self) -> None:
        """The slot map drawn once before any call: redis-py's lazy drawing lets the calls that race it go
        to the startup node, whose MOVED answers make it draw the map again and drop every connection
        (a call in flight on one then fails, and is retried after it may have run)."""
        if self._drawing is None:
            self._drawing = asyncio.Lock()
        async with self._drawing:
            if self._drawn:
                return
            try:
                await self.redis.initialize()
            except Exception as exc:  # noqa: BLE001 - no node answered: the store's own failure
                raise StoreUnavailable(f"redis cluster: {exc}") from None
            self._drawn = True

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA on the master of the first key's slot, EVAL once where the script is not loaded yet."""
        try:
            return await self._ask(("EVALSHA", script.sha, len(keys), *keys, *args))
        except RedisError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            return await self._ask(("EVAL", script.source, len(keys), *keys, *args))

    async def close(self) -> None:
        await self.redis.aclose()
