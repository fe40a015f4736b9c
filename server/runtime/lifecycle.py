"""Start and stop the runtime with the app; `app.state.runtime` is what the API and routes talk to."""
from __future__ import annotations

import asyncio
import gc
import logging
import os
from typing import Any, Awaitable

import httpx

from server.egress import Allow
from server.runtime import publish_sessions
from server.runtime.catalog import Catalog, db_loaders
from server.runtime.dispatch import Dispatcher
from server.runtime.funnel_counts import ROLLUP_EVERY
from server.runtime.keys import Keys
from server.runtime.loop import repeat
from server.runtime.max_client import SEND_TIMEOUT, MaxClient
from server.runtime.notifier import Notifier
from server.runtime.outbox import ACTION_TIMEOUT, MaxSender, Outbox
from server.runtime.ratelimit import RateLimiter, SharedRateLimiter
from server.runtime.retention import RETENTION_EVERY, Retention
from server.runtime.stores.base import DialogStore, StoreUnavailable
from server.runtime.timers import Timers
from server.runtime.transport import LeanClient

log = logging.getLogger("botflow.runtime")

GC_YOUNG = 5000  # allocations between young-generation collections
TIMELINE_EVERY = 0.5  # seconds between moves of timeline records from Redis to the database
# Each part of the runtime gets this long to stop: a connection to a server that stopped answering must
# not keep a replica from exiting (and what a part leaves is committed, so another replica resumes it).
STOP_WITHIN = 5.0


async def bounded(name: str, step: Awaitable[Any]) -> None:
    """Await one step of a shutdown for at most STOP_WITHIN seconds; a late one is logged and left."""
    try:
        async with asyncio.timeout(STOP_WITHIN):
            await step
    except TimeoutError:
        log.warning("%s did not stop within %g s; shutting down without waiting for it", name, STOP_WITHIN,
                    extra={"event": "shutdown", "outcome": "late"})


def make_store(redis_url: str | None, engine: Any, prefix: str, send_rate: float | None = None) -> DialogStore:
    """Redis when configured (reserving each bot's send slots at `send_rate`, timelines moved to the
    app's database), else the app's database."""
    if redis_url:
        from server.runtime.stores.redis import RedisStore
        from server.runtime.stores.resp import connect

        return RedisStore(redis_url, prefix=prefix, client=connect(redis_url), send_rate=send_rate,
                          timeline_db=engine)
    from server.runtime.stores.sql import SqlStore

    return SqlStore(engine)


class Runtime:
    """Store, catalog, dispatcher and the background loops (timers, outbox, publication channel)."""

    def __init__(self, settings: Any, db: Any) -> None:
        prefix = os.environ.get("BOTFLOW_REDIS_PREFIX") or "botflow"
        self.settings = settings
        self.store = make_store(settings.redis_url, db.engine, prefix, settings.max_rate)
        self.catalog = Catalog(*db_loaders(db.sessionmaker))
        self.max_http = LeanClient(timeout=SEND_TIMEOUT)
        # The bot's rate is kept by the outbox (shared across replicas through Redis), not per client.
        self.client = MaxClient(settings.max_api_url, rate=None, client=self.max_http)  # type: ignore[arg-type]
        self.sender = MaxSender(self.client)
        client = getattr(self.store, "client", None)
        self.limiter = (SharedRateLimiter(client, Keys(prefix).rate, settings.max_rate) if settings.redis_url
                        else RateLimiter(settings.max_rate))
        # Webhook actions on plain httpx: server.egress checks the peer each connection reached, and reads capped.
        self.http = httpx.AsyncClient(timeout=ACTION_TIMEOUT, trust_env=False, follow_redirects=False)
        self.outbox = Outbox(self.store, self.catalog, self.sender, self.http, self.limiter,
                             allow=Allow.parse(settings.action_allow))
        self.dispatcher = Dispatcher(self.store, self.catalog, self.outbox)
        self.timers = Timers(self.dispatcher)
        self.retention = Retention(self.store, db.sessionmaker)
        self.notifier = Notifier(settings.redis_url, Keys(prefix).channel, self.catalog) if settings.redis_url else None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(loop) for loop in (
            self.timers.run(), self.timers.hold(), self.outbox.run(), self.outbox.hold(), self.dispatcher.keep_locks(),
            repeat("timeline", self._move_timeline, TIMELINE_EVERY, log),
            repeat("retention", self.retention.pass_once, RETENTION_EVERY, log),
            repeat("funnel rollup", self.store.roll_up, ROLLUP_EVERY, log))]
        if self.notifier is not None:
            await self.notifier.start()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await bounded("the background loops", asyncio.gather(*self._tasks, return_exceptions=True))
        await bounded("the outbox", self.outbox.stop())
        if self.notifier is not None:
            await bounded("the publication channel", self.notifier.stop())
        await bounded("the webhook actions' client", self.http.aclose())
        await bounded("the MAX client", self.client.aclose())
        await bounded("the MAX connections", self.max_http.aclose())
        await bounded("the dialog store", self.store.close())

    async def _move_timeline(self) -> None:
        while await self.store.move_timeline() > 0:
            pass

    async def published(self, bot_id: str, flow_id: str, version: int, sessions: str = "keep") -> int:
        """A publication committed: every replica serves it now; reset/migrate running dialogs."""
        await self.bot_changed(bot_id)
        return await publish_sessions.apply(self.dispatcher, bot_id, flow_id, int(version), sessions or "keep")

    async def bot_changed(self, bot_id: str) -> None:
        """Token, secret or publication changed: drop cached settings here and on every replica."""
        self.catalog.invalidate(bot_id)
        if self.notifier is not None:
            await self.notifier.announce(bot_id)

    async def ready(self) -> bool:
        """Whether dialogs can be served (the store answers)."""
        try:
            await self.store.ping()
            return True
        except StoreUnavailable:
            return False


async def startup(app: Any) -> None:
    # One INFO line per outgoing reply is noise at webhook rates; failures are logged by the runtime.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    runtime = Runtime(app.state.settings, app.state.db)
    await runtime.start()
    app.state.runtime = runtime
    tune_gc()


def tune_gc() -> None:
    """The collector set for serving webhooks, once everything long-lived is loaded."""
    # Everything loaded at start-up lives as long as the process: keep it out of the collector's scans,
    # so full collections under webhook load stay short (they otherwise show up as p99 spikes).
    gc.collect()
    gc.freeze()
    # A webhook allocates a few hundred tracked objects that die young; at the default threshold (700) the
    # young-generation scans took ~90 µs of CPU per update here, at 5,000 ~25 µs, with pauses of ~2 ms.
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])


async def shutdown(app: Any) -> None:
    runtime = getattr(app.state, "runtime", None)
    if runtime is not None:
        await runtime.stop()
