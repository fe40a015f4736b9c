"""Start and stop the runtime with the app; `runtime_of(app)` is what the API and pages talk to."""
from __future__ import annotations

import asyncio
import gc
import logging
import os
from typing import Any, Awaitable, Protocol

import httpx

from server.channels.base import Channel
from server.channels.ratelimit import RateLimiter, scheduled
from server.db.engine import Database
from server.db.uploads import UploadFiles
from server.egress import Allow
from server.runtime import publish_sessions
from server.runtime.catalog import Catalog, db_loaders
from server.runtime.dispatch import Dispatcher
from server.runtime.funnel_counts import ROLLUP_EVERY
from server.runtime.keys import Keys
from server.runtime.loop import repeat
from server.runtime.notifier import Notifier
from server.runtime.outbox import ACTION_TIMEOUT, Outbox
from server.runtime.retention import RETENTION_EVERY, Retention
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.ports import DialogStore
from server.runtime.store_clock import StoreClock
from server.runtime.timers import Timers
from server.settings import Settings

log = logging.getLogger("botflow.runtime")

GC_YOUNG = 5000  # allocations between young-generation collections
TIMELINE_EVERY = 0.5  # seconds between moves of timeline records from Redis to the database
LOST_EVERY = 1.0  # seconds between looks at the epoch record: a Redis that restarted empty is reported within this
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


def make_store(redis_url: str | None, engine: Any, prefix: str, send_rate: float | None = None,
               min_replicas: int = 0) -> DialogStore:
    """Redis when configured (reserving each bot's send slots at `send_rate`, timelines moved to the
    app's database), else the app's database."""
    if redis_url:
        from server.runtime.stores.redis import RedisStore
        from server.runtime.stores.resp import connect

        return RedisStore(redis_url, prefix=prefix, client=connect(redis_url), send_rate=send_rate,
                          timeline_db=engine, min_replicas=min_replicas)
    from server.runtime.stores.sql import sql_store

    return sql_store(engine)


class Runtime:
    """Store, catalog, dispatcher and the background loops (timers, outbox, publication channel)."""

    def __init__(self, settings: Settings, db: Database, channel: Channel) -> None:
        prefix = os.environ.get("BOTFLOW_REDIS_PREFIX") or "botflow"
        self.settings = settings
        rate = scheduled(settings.max_rate)  # what MAX allows, less the jitter on the way there
        self.store = make_store(settings.redis_url, db.engine, prefix, rate,
                                getattr(settings, "redis_min_replicas", 0))
        # Every time this replica writes (leases, claim ends, due times, activity) is on the store's clock.
        self.clock = StoreClock(self.store)
        self.store.clock = self.clock  # type: ignore[attr-defined]
        self.catalog = Catalog(*db_loaders(db.sessionmaker))
        self.channel = channel  # parses deliveries (`webhook.answer`)
        # Sends; the bot's rate is kept by the outbox, across replicas. Uploaded pictures come from the database.
        self.link = channel.link(settings, UploadFiles(db.sessionmaker))
        client = getattr(self.store, "client", None) if settings.redis_url else None
        keys = getattr(self.store, "keys", None) or Keys(prefix)
        self.limiter = RateLimiter(rate, redis=client, prefix=keys.rate, key_of=keys.rate_key)
        # Webhook actions on plain httpx: server.egress checks the peer each connection reached, and reads capped.
        self.http = httpx.AsyncClient(timeout=ACTION_TIMEOUT, trust_env=False, follow_redirects=False)
        self.outbox = Outbox(self.store, self.catalog, self.link.send, self.http, self.limiter,
                             allow=Allow.parse(settings.action_allow), clock=self.clock)
        self.dispatcher = Dispatcher(self.store, self.catalog, self.outbox, clock=self.clock)
        self.timers = Timers(self.dispatcher, clock=self.clock)
        self.retention = Retention(self.store, db.sessionmaker, clock=self.clock)
        self.notifier = Notifier(settings.redis_url, Keys(prefix).channel, self.catalog) if settings.redis_url else None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        try:  # before the first turn writes a time; a store not answering yet is measured by the loop
            async with asyncio.timeout(STOP_WITHIN):
                await self.clock.measure()
                await self.store.check_lost()  # the epoch record seen (or made) before the first turn
        except (StoreUnavailable, TimeoutError) as exc:
            log.warning("the dialog store's clock could not be read at start-up: %s", exc,
                        extra={"event": "clock_offset", "outcome": "store_error"})
        self._tasks = [asyncio.create_task(loop) for loop in (
            self.clock.run(), self.timers.run(), self.timers.hold(), self.outbox.run(), self.outbox.hold(), self.dispatcher.keep_locks(),
            repeat("timeline", self._move_timeline, TIMELINE_EVERY, log),
            repeat("store epoch", self.store.check_lost, LOST_EVERY, log),
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
        await bounded("the messenger's connections", self.link.aclose())
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


class HasState(Protocol):
    """An app (Litestar's) whose `state` holds the runtime once it started."""

    state: Any


def runtime_of(app: HasState) -> Runtime:
    """The app's started runtime, typed; AttributeError before `startup` ran."""
    runtime: Runtime = app.state.runtime
    return runtime


def runtime_if_started(app: HasState) -> Runtime | None:
    """The app's runtime, or None before `startup` (health, pages and publishing answer without one)."""
    runtime: Runtime | None = getattr(app.state, "runtime", None)
    return runtime


async def startup(app: Any) -> None:
    """Start the runtime for `app.state.channel` (its deliveries, its sends)."""
    # One INFO line per outgoing reply is noise at webhook rates; failures are logged by the runtime.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    runtime = Runtime(app.state.settings, app.state.db, app.state.channel)
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
    runtime = runtime_if_started(app)
    if runtime is not None:
        await runtime.stop()
