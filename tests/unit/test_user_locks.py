"""The in-process lock per dialog: one holder at a time, first come first served, cancellation-safe."""
from __future__ import annotations

import asyncio

from server.runtime.dispatch import UserLocks

KEY = ("bot", "1")


async def test_turns_of_one_user_run_one_at_a_time_in_arrival_order() -> None:
    locks, order, inside = UserLocks(), [], []

    async def turn(n: int) -> None:
        await locks.acquire(KEY)
        try:
            inside.append(n)
            assert len(inside) == 1, "two turns of one user ran at once"
            await asyncio.sleep(0)
            order.append(n)
            inside.remove(n)
        finally:
            locks.release(KEY)

    await asyncio.gather(*(turn(n) for n in range(20)))
    assert order == list(range(20))
    assert locks._held == {}, "a lock nobody holds is forgotten"


async def test_other_users_do_not_wait() -> None:
    locks = UserLocks()
    await locks.acquire(KEY)
    await asyncio.wait_for(locks.acquire(("bot", "2")), 1)
    locks.release(("bot", "2"))
    locks.release(KEY)
    assert locks._held == {}


async def test_a_cancelled_waiter_leaves_the_queue_and_the_next_one_gets_the_lock() -> None:
    locks = UserLocks()
    await locks.acquire(KEY)
    gave_up = asyncio.ensure_future(locks.acquire(KEY))
    patient = asyncio.ensure_future(locks.acquire(KEY))
    await asyncio.sleep(0)
    gave_up.cancel()
    await asyncio.gather(gave_up, return_exceptions=True)
    locks.release(KEY)
    await asyncio.wait_for(patient, 1)
    locks.release(KEY)
    assert locks._held == {}


async def test_a_waiter_cancelled_as_the_lock_reaches_it_passes_the_lock_on() -> None:
    locks = UserLocks()
    await locks.acquire(KEY)
    unlucky = asyncio.ensure_future(locks.acquire(KEY))
    next_one = asyncio.ensure_future(locks.acquire(KEY))
    await asyncio.sleep(0)
    locks.release(KEY)  # hands the lock to `unlucky`, which is cancelled before it runs
    unlucky.cancel()
    await asyncio.gather(unlucky, return_exceptions=True)
    assert unlucky.cancelled()
    await asyncio.wait_for(next_one, 1)
    locks.release(KEY)
    assert locks._held == {}
