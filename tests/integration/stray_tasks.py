"""Tasks a test's apps leave behind are ended before the test's event loop closes, each within a bound.

SQLAlchemy terminates an aiosqlite connection whose operation was cancelled (a background loop stopped at
shutdown) through a shielded graceful close. When its worker thread already stopped, that close (aiosqlite
0.22.1 `Connection.close`) waits on a future nobody resolves, and after one cancellation it waits again in its
`finally`. pytest-asyncio closes the loop by cancelling every task once and waiting for all of them with no
deadline, so such a task hung a CI worker until faulthandler killed it. Cancelling again ends it.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

log = logging.getLogger("tests.stray_tasks")
ROUNDS = 5  # cancellations per task: the close above needs two
ROUND_WAIT = 2.0  # seconds each round waits for the cancelled tasks


async def end_stray_tasks() -> list[asyncio.Task[object]]:
    """Cancel every task but the caller's, again while any is left; the ones still running are returned."""
    left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for _ in range(ROUNDS):
        if not left:
            break
        for task in left:
            task.cancel()
        _, pending = await asyncio.wait(left, timeout=ROUND_WAIT)
        left = list(pending)
    for task in left:
        log.error("a task ignored %d cancellations and is left running: %r", ROUNDS, task)
    return left


@pytest.fixture(autouse=True)
async def no_stray_tasks() -> AsyncIterator[None]:
    """After each async test: its leftover tasks ended (see the module's docstring)."""
    yield
    await end_stray_tasks()
