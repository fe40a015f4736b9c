"""What each bot serves: bot settings cached briefly, compiled flows cached per immutable version.

A publish is seen at once by the replica that made it (`invalidate`), by the others through Redis
pub/sub (`notifier`), and at worst after CACHE_SECONDS when a notification was missed.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from flows.load import load
from flows.masking import Masking
from flows.model import Flow
from server.runtime.arms import Arms

log = logging.getLogger("botflow.runtime.catalog")

CACHE_SECONDS = 1.0


class Missing:
    """What `Catalog.loaded` answers for a version not loaded yet (None means: no such flow)."""


MISSING = Missing()


@dataclass(frozen=True, slots=True)
class BotInfo:
    """A bot as the runtime needs it: credentials and the version it serves now."""

    id: str
    token: str | None
    secret: str | None
    flow_id: str | None
    version: int | None
    masking: Masking = Masking()  # data keys and input types kept out of transcripts
    arms: Arms | None = None  # a running experiment: new dialogs start on the user's arm instead of `version`


BotLoader = Callable[[str], Awaitable[BotInfo | None]]
DocumentLoader = Callable[[str, int], Awaitable[dict[str, Any] | None]]


def _quiet(task: asyncio.Future[Any]) -> None:
    """A failed background refresh only means the stale entry is kept a little longer."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("refreshing bot settings failed: %s", task.exception())


class Catalog:
    """Bot lookups with a short cache; Flow objects compiled once per (flow, version)."""

    def __init__(self, load_bot: BotLoader, load_document: DocumentLoader,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._load_bot = load_bot
        self._load_document = load_document
        self._clock = clock
        self._bots: dict[str, tuple[BotInfo | None, float]] = {}
        # The last settings read of every bot, kept through invalidations: served while the database
        # cannot be read (a PostgreSQL outage, also right after a publish), so live traffic goes on.
        self._last_good: dict[str, BotInfo | None] = {}
        self._serving_stale: set[str] = set()  # bots answered from `_last_good` now (logged once each)
        self._flows: dict[tuple[str, int], Flow | None] = {}
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._refreshing: set[str] = set()  # bots whose settings are being reloaded in the background
        # Bumped by `invalidate`: a load that began before a change must not store (or hand out) what it read.
        self._epoch = 0

    async def _once(self, key: Any, make: Callable[[], Awaitable[Any]]) -> Any:
        """Concurrent misses for one key share a single load."""
        fut = self._pending.get(key)
        if fut is not None:
            return await asyncio.shield(fut)
        fut = asyncio.get_running_loop().create_future()
        self._pending[key] = fut
        try:
            value = await make()
            fut.set_result(value)
            return value
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # nobody else may be waiting: mark it retrieved
            raise
        finally:
            if self._pending.get(key) is fut:  # an invalidation may have put a newer load in its place
                del self._pending[key]

    async def bot(self, bot_id: str) -> BotInfo | None:
        """The bot's settings, refreshed every CACHE_SECONDS.

        A stale entry is served while one background load refreshes it, so a slow database never stalls
        webhooks; only a bot never seen (or just invalidated by a change on this replica) waits for the load.
        """
        cached = self._bots.get(bot_id)
        if cached is not None:
            if cached[1] <= self._clock() and bot_id not in self._refreshing:
                # Marked at once: the task registers itself in _pending only when it first runs, and every
                # call until then would start another refresh.
                self._refreshing.add(bot_id)
                task = asyncio.ensure_future(self._once(("bot", bot_id), lambda: self._fetch_bot(bot_id)))

                def refreshed(done: asyncio.Future[Any]) -> None:
                    self._refreshing.discard(bot_id)
                    _quiet(done)

                task.add_done_callback(refreshed)
            return cached[0]
        try:
            return await self._once(("bot", bot_id), lambda: self._fetch_bot(bot_id))
        except Exception:
            if bot_id not in self._last_good:
                raise
            if bot_id not in self._serving_stale:
                self._serving_stale.add(bot_id)
                log.warning("bot settings cannot be read; serving the last copy read until they can",
                            exc_info=True, extra={"event": "catalog_stale", "bot": bot_id, "outcome": "stale"})
            return self._last_good[bot_id]

    async def _fetch_bot(self, bot_id: str) -> BotInfo | None:
        epoch = self._epoch
        info = await self._load_bot(bot_id)
        self._last_good[bot_id] = info
        if bot_id in self._serving_stale:
            self._serving_stale.discard(bot_id)
            log.warning("bot settings read again", extra={"event": "catalog_stale", "bot": bot_id, "outcome": "ok"})
        if epoch == self._epoch:
            self._bots[bot_id] = (info, self._clock() + CACHE_SECONDS)
        return info

    def has_copies(self) -> bool:
        """Whether some bot's settings are at hand without the database (webhooks can be served)."""
        return bool(self._bots or self._last_good)

    def loaded(self, flow_id: str | None, version: int | None) -> Flow | None | Missing:
        """`flow()` without a wait when the version is already here (every turn asks twice), else MISSING."""
        if flow_id is None or version is None:
            return None
        return self._flows.get((flow_id, version), MISSING)

    async def flow(self, flow_id: str, version: int | None) -> Flow | None:
        """The compiled frozen version; versions never change, so it is kept for the process's life."""
        if version is None:
            return None
        key = (flow_id, int(version))
        if key in self._flows:
            return self._flows[key]

        async def fetch() -> Flow | None:
            document = await self._load_document(flow_id, int(version))
            flow = None
            if document is not None:
                flow = load(document, allow=None)  # a frozen version's hosts were judged when it was saved
                flow.version = int(version)
            self._flows[key] = flow
            return flow

        return await self._once(("flow", key), fetch)

    async def serving(self, bot: BotInfo) -> Flow | None:
        """The flow the bot serves now (None before its first publish)."""
        if bot.flow_id is None or bot.version is None:
            return None
        return await self.flow(bot.flow_id, bot.version)

    def invalidate(self, bot_id: str | None = None) -> None:
        """Forget cached bot settings (one bot, or all), loads already under way included."""
        self._epoch += 1
        if bot_id is None:
            self._bots.clear()
        else:
            self._bots.pop(bot_id, None)
        for key in [k for k in self._pending if k[0] == "bot" and (bot_id is None or k[1] == bot_id)]:
            del self._pending[key]  # the next caller starts a fresh load instead of joining a stale one


def masking_of(keys: str | None, inputs: str | None) -> Masking:
    """A bot's masking settings from its columns (JSON lists of data keys and input types)."""
    return Masking(frozenset(json.loads(keys or "[]")), frozenset(json.loads(inputs or "[]")))


def db_loaders(sessionmaker: Any) -> tuple[BotLoader, DocumentLoader]:
    """Loaders reading the core tables (bots, flow_versions) of the app's database."""
    from sqlalchemy import select

    from server.db.experiments import ExperimentRow
    from server.db.models import BotRow, VersionRow

    async def load_bot(bot_id: str) -> BotInfo | None:
        async with sessionmaker() as session:
            row = await session.get(BotRow, bot_id)
            if row is None:
                return None
            running = (await session.execute(select(ExperimentRow).where(
                ExperimentRow.running_bot == bot_id))).scalar_one_or_none()
            arms = None if running is None else Arms.of(running.id, running.flow_id, json.loads(running.arms),
                                                        running.goal_state)
            return BotInfo(row.id, row.token, row.webhook_secret, row.flow_id, row.version,
                           masking_of(row.mask_keys, row.mask_inputs), arms)

    async def load_document(flow_id: str, version: int) -> dict[str, Any] | None:
        async with sessionmaker() as session:
            text = await session.scalar(select(VersionRow.document).where(
                (VersionRow.flow_id == flow_id) & (VersionRow.number == version)))
        return json.loads(text) if text is not None else None

    return load_bot, load_document
