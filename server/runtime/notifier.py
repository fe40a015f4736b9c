"""Redis pub/sub telling every replica that a bot changed (publish, token, secret), so caches drop it."""
from __future__ import annotations

import asyncio
import logging

from server.runtime.catalog import Catalog

log = logging.getLogger("botflow.runtime.notifier")


class Notifier:
    """Redis pub/sub: tell every replica that a bot changed (publish, token, secret)."""

    def __init__(self, url: str, channel: str, catalog: Catalog) -> None:
        from server.runtime.stores.sentinel import redis_py

        # Connecting (and closing) is bounded; a subscriber's reads are not: it waits for news by design.
        self._redis = redis_py(url, socket_connect_timeout=5.0)
        self._channel = channel
        self._catalog = catalog
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen())

    async def announce(self, bot_id: str) -> None:
        try:
            await self._redis.publish(self._channel, bot_id)
        except Exception:  # noqa: BLE001 - the short cache still catches up within a second
            log.warning("could not announce a change of bot %s", bot_id, exc_info=True)

    async def _listen(self) -> None:
        failing = False
        while True:
            try:
                pubsub = self._redis.pubsub()
                await pubsub.subscribe(self._channel)
                self._catalog.invalidate()  # anything may have changed while we were not listening
                failing = False
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        data = message["data"]
                        self._catalog.invalidate(data.decode() if isinstance(data, bytes) else str(data))
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis went away: retry, the cache bounds staleness meanwhile
                if not failing:
                    log.warning("publication channel lost; resubscribing every second", exc_info=True)
                failing = True
                await asyncio.sleep(1.0)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        await self._redis.aclose()
