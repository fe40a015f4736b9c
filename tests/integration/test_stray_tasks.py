"""A leftover task that waits again after its first cancellation (as aiosqlite's close does) is ended."""
from __future__ import annotations

import asyncio

from tests.integration.stray_tasks import end_stray_tasks


async def _close_like_aiosqlite(never: asyncio.Future[None], again: asyncio.Future[None]) -> None:
    """aiosqlite 0.22.1's `Connection.close` with its worker thread gone: each wait is for a future nobody
    resolves, the second one in a `finally`."""
    try:
        await never
    finally:
        await again


async def test_a_task_waiting_again_after_one_cancellation_is_ended() -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(_close_like_aiosqlite(loop.create_future(), loop.create_future()))
    await asyncio.sleep(0)
    task.cancel()  # what asyncio.Runner.close does once before waiting without a deadline
    await asyncio.wait([task], timeout=0.2)
    assert not task.done()  # one cancellation leaves it waiting: the hang CI saw
    assert await end_stray_tasks() == []
    assert task.cancelled()
