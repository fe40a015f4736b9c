"""Bounded waits for futures without a timer each (a webhook waits for its replies' sends this way)."""
from __future__ import annotations

import asyncio
import collections
from typing import Any


class Waits:
    """Bounded waits for futures without a timer each: every webhook waits, and a timer per wait (armed,
    then cancelled) costs more than the rest of its bookkeeping. All waits share one bound, so deadlines
    arrive in order and one ticker wakes the expired ones."""

    TICK = 0.1

    def __init__(self) -> None:
        self._queue: collections.deque[tuple[float, asyncio.Future[None]]] = collections.deque()
        self._ticking = False

    async def within(self, future: asyncio.Future[Any], seconds: float) -> None:
        """Return when `future` is done or about `seconds` passed (up to TICK later); never cancels it."""
        if future.done():
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake(_: Any = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        future.add_done_callback(wake)
        self._queue.append((loop.time() + seconds, waiter))
        if not self._ticking:
            self._ticking = True
            loop.call_later(self.TICK, self._tick, loop)
        try:
            await waiter
        finally:
            future.remove_done_callback(wake)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        queue = self._queue
        while queue and (queue[0][0] <= now or queue[0][1].done()):
            _, waiter = queue.popleft()
            if not waiter.done():
                waiter.set_result(None)
        if queue:
            loop.call_later(self.TICK, self._tick, loop)
        else:
            self._ticking = False
