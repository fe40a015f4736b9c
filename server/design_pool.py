"""Worker processes for the designer's CPU-heavy work, so a replica's event loop keeps serving webhooks.

Validating, loading, exporting or diffing a 10,000-state draft takes about a second of pure Python; on the
loop that serves MAX that second is every webhook's latency. The work runs here instead, at most `workers`
jobs at once plus `queue` waiting; past that the request answers 503 with a sentence (the editor retries).
"""
from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from server.errors import AppError

log = logging.getLogger("botflow.design")
T = TypeVar("T")
BUSY_RETRY = 5  # seconds a refused job is asked to wait (Retry-After)
WORKER_NICENESS = 19


def _yield_to_webhooks() -> None:
    """Workers run at a lower CPU priority: on a small machine the scheduler then gives webhooks the core."""
    try:
        os.nice(WORKER_NICENESS)
    except OSError:  # not allowed here: the work still runs, only without the lower priority
        pass


class DesignBusy(AppError):
    """Every worker is busy and the queue is full: 503, try again shortly."""

    def __init__(self) -> None:
        super().__init__(503, "design_busy",
                         "The server is busy checking other flows; try again in a few seconds.",
                         headers={"Retry-After": str(BUSY_RETRY)})


class DesignPool:
    """A lazily started process pool with a bound on jobs running and waiting."""

    def __init__(self, workers: int, queue: int) -> None:
        self.workers = workers
        self.queue = queue
        self.jobs = 0  # running or waiting; a job counts until its process is done, even if its caller left
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()  # jobs end in the pool's management thread

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # spawn: a fork of a process with running threads (the database driver's, the loop's) may deadlock
            self._executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_yield_to_webhooks)
        return self._executor

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(*args) in a worker process (inline when the pool has no workers); DesignBusy when full."""
        if self.workers <= 0:
            return fn(*args)
        if self.jobs >= self.workers + self.queue:
            raise DesignBusy()
        try:
            future: Future[T] = self._pool().submit(fn, *args)
        except (BrokenProcessPool, RuntimeError):  # a worker died (killed, out of memory): start afresh
            self._executor = None
            future = self._pool().submit(fn, *args)
        with self._lock:
            self.jobs += 1
        future.add_done_callback(self._done)
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            log.warning("a design worker process died; the pool starts new ones")
            self._executor = None
            raise DesignBusy() from None

    def _done(self, _: Future[Any]) -> None:
        with self._lock:
            self.jobs -= 1

    def shutdown(self) -> None:
        """Stop the workers without waiting for their jobs (nobody is waiting for them any more)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


_pool = DesignPool(workers=1, queue=8)


def configure(workers: int, queue: int) -> None:
    """The running app's bounds (create_app sets them); a changed worker count starts a new pool."""
    global _pool
    if workers != _pool.workers:
        _pool.shutdown()
        _pool = DesignPool(workers, queue)
    _pool.queue = queue


async def run(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) in the app's design pool."""
    return await _pool.run(fn, *args)


def shutdown() -> None:
    _pool.shutdown()
