"""One path for every update: lock → load → step → send → save (dialog, timeline, mark, timer, outbox) → unlock."""
from __future__ import annotations

import asyncio
import logging
import math
import time
from contextlib import suppress
from typing import Any, Awaitable, Callable

from flows.engine import step
from flows.timers import reminder_at, timeout_at
from flows.model import Flow
from flows.session import Session, StepResult, Update
from server.runtime import timeline
from server.runtime.max_client import MaxApiError
from server.runtime.stores.base import BUSY, DUPLICATE, DialogStore, Loaded, StoreUnavailable, Write, new_token
from server.runtime.versions import BotInfo, Catalog
from server.runtime.webhook import Incoming

log = logging.getLogger("botflow.runtime.dispatch")

SendFn = Callable[[BotInfo, dict[str, Any]], Awaitable[Any]]
# Ten years: longer than any dialog is kept in practice, far inside what every store accepts as a TTL.
MAX_KEY_TTL = 10 * 365 * 24 * 3600.0


def due(flow: Flow, session: Session) -> float | None:
    """When the dialog's reminder or timeout is due; expiry needs no timer (the store's TTL drops it)."""
    times = [t for t in (reminder_at(flow, session), timeout_at(flow, session)) if t is not None]
    return min(times) if times else None


class UserLocks:
    """In-process FIFO lock per dialog, so one replica queues its own turns instead of polling Redis."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], list[Any]] = {}

    async def acquire(self, key: tuple[str, str]) -> None:
        entry = self._held.get(key)
        if entry is None:
            self._held[key] = entry = [asyncio.Lock(), 0]
        entry[1] += 1
        try:
            await entry[0].acquire()
        except BaseException:
            self._drop(key, entry)
            raise

    def release(self, key: tuple[str, str]) -> None:
        entry = self._held[key]
        entry[0].release()
        self._drop(key, entry)

    def _drop(self, key: tuple[str, str], entry: list[Any]) -> None:
        entry[1] -= 1
        if entry[1] == 0:
            del self._held[key]


def reply_items(result: StepResult, user: str, chat: int | None, callback_id: str | None) -> list[dict[str, Any]]:
    """The MAX calls a turn makes, in order: the press acknowledgement first, then one message per reply."""
    items: list[dict[str, Any]] = []
    if callback_id is not None:
        items.append({"id": new_token(), "op": "answer", "callback_id": callback_id})
    for reply in result.replies:
        items.append({"id": new_token(), "op": "send", "chat_id": chat, "user_id": int(user) if chat is None else None,
                      "text": reply.text, "buttons": reply.buttons})
    return items


class Dispatcher:
    """Runs turns for webhooks, timers, API events and publishes against one store."""

    def __init__(self, store: DialogStore, catalog: Catalog, send: SendFn, *,
                 clock: Callable[[], float] = time.time, lock_wait: float = 10.0) -> None:
        self.store = store
        self.catalog = catalog
        self.send = send
        self.clock = clock
        self.lock_wait = lock_wait
        self.locks = UserLocks()

    async def _begin(self, bot_id: str, user: str, token: str, dedupe: str | None) -> Loaded:
        loaded = await self.store.begin(bot_id, user, token, dedupe)
        if loaded.status != BUSY:
            return loaded
        # Another replica holds the dialog: poll with a short, growing pause.
        deadline, pause = time.monotonic() + self.lock_wait, 0.002
        while loaded.status == BUSY:
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"dialog {bot_id}/{user} stayed locked for {self.lock_wait} s")
            await asyncio.sleep(min(pause, loaded.retry_ms / 1000))
            pause = min(pause * 2, 0.05)
            loaded = await self.store.begin(bot_id, user, token, dedupe)
        return loaded

    async def handle(self, bot: BotInfo, incoming: Incoming) -> StepResult | None:
        """A webhook delivery; None for a duplicate or a bot that serves nothing yet."""
        key = (bot.id, incoming.user)
        await self.locks.acquire(key)
        try:
            token = new_token()
            loaded = await self._begin(bot.id, incoming.user, token, incoming.dedupe)
            if loaded.status == DUPLICATE:
                if incoming.callback_id is not None:  # the client is still waiting: acknowledge again
                    await self.deliver(bot, [{"id": token, "op": "answer", "callback_id": incoming.callback_id}], [])
                return None
            return await self.run(bot, incoming.user, incoming.update, token, loaded, chat=incoming.chat_id,
                                  dedupe=incoming.dedupe, callback_id=incoming.callback_id)
        finally:
            self.locks.release(key)

    async def turn(self, bot: BotInfo, user: str, update: Update, *, require_dialog: bool = False,
                   require_fire: bool = False) -> tuple[str, StepResult | None]:
        """A turn not from a webhook (timer tick, API event); returns (status, result).

        status: "ok", "no_dialog" (require_dialog and none exists), "not_fired" (require_fire and no
        transition took the update: nothing was written).
        """
        key = (bot.id, user)
        await self.locks.acquire(key)
        try:
            token = new_token()
            loaded = await self._begin(bot.id, user, token, None)
            if require_dialog and loaded.session is None:
                await self.store.release(bot.id, user, token, loaded)
                return "no_dialog", None
            result = await self.run(bot, user, update, token, loaded, require_fire=require_fire)
            if require_fire and (result is None or result.transition is None):
                return "not_fired", result
            return "ok", result
        finally:
            self.locks.release(key)

    async def run(self, bot: BotInfo, user: str, update: Update, token: str, loaded: Loaded, *,
                  chat: int | None = None, dedupe: str | None = None, callback_id: str | None = None,
                  require_fire: bool = False) -> StepResult | None:
        """Step the loaded dialog, send, save; the lock is released on every path."""
        try:
            now = self.clock()
            stored = loaded.session
            session = Session.from_dict(stored) if stored is not None else None
            latest = await self.catalog.serving(bot)
            flow = await self.catalog.flow(session.flow, session.version) if session is not None else None
            if flow is None:
                session, flow = None, latest  # never started, or its version is gone
            if flow is None:  # the bot serves nothing (deleted?): a dialog left over is dropped
                if stored is not None:
                    await self.store.commit(bot.id, user, token, Write(None, dedupe=dedupe), loaded)
                else:
                    await self.store.release(bot.id, user, token, loaded)
                if callback_id is not None:
                    await self.deliver(bot, reply_items(StepResult(None), user, chat, callback_id), [])
                return None
            result = step(flow, session, update, now, latest=latest)
            if require_fire and result.transition is None:
                await self.store.release(bot.id, user, token, loaded)
                return result
            if chat is None and stored is not None:
                chat = stored.get("chat_id")
            after = result.session.to_dict() if result.session is not None else None
            if after is not None and chat is not None:
                after["chat_id"] = chat
            items = reply_items(result, user, chat, callback_id)
            notes: list[str] = []
            # Replies already waiting for this user go first: new ones queue behind them.
            queued = items if loaded.pending else await self.deliver(bot, items, notes)
            had_timer = stored is not None and stored.get("due") is not None
            write = self._write(flow, latest, result, after, now, dedupe, queued, bot.id, user, had_timer)
            quiet = update.kind == "tick" and result.outcome == "ignored"
            if not quiet:
                before = session.state if session is not None else None
                write.timeline = timeline.record(now, update, before, result, after, notes)
            await self.store.commit(bot.id, user, token, write, loaded)
            return result
        except BaseException:
            with suppress(Exception):
                await self.store.release(bot.id, user, token, loaded)
            raise

    def _write(self, flow: Flow, latest: Flow | None, result: StepResult, after: dict[str, Any] | None,
               now: float, dedupe: str | None, queued: list[dict[str, Any]], bot_id: str, user: str,
               had_timer: bool) -> Write:
        for item in queued:
            item.setdefault("queued", now)
        write = Write(after, dedupe=dedupe, outbox=queued, outbox_at=now, had_timer=had_timer)
        if result.session is not None:
            runs_on = flow
            if latest is not None and (result.session.flow, result.session.version) == (latest.id, latest.version):
                runs_on = latest
            ttl = result.session.updated_at + runs_on.settings.session_ttl - now
            # session_ttl has no upper bound; stores (Redis EX) take at most a 64-bit count of seconds.
            write.ttl = max(1, math.ceil(min(ttl, MAX_KEY_TTL)))
            write.timer_due = due(runs_on, result.session)
            after["due"] = write.timer_due  # type: ignore[index]
        write.actions = [{"id": new_token(), "bot": bot_id, "user": user, "url": effect.url, "data": effect.data,
                          "created": now, "attempts": 0} for effect in result.effects if effect.type == "webhook"]
        return write

    async def deliver(self, bot: BotInfo, items: list[dict[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
        """Send in order; return what must wait in the outbox (from the first retryable failure on)."""
        for n, item in enumerate(items):
            try:
                await self.send(bot, item)
            except MaxApiError as exc:
                if exc.retryable:
                    return items[n:]
                notes.append(f"{item['op']} refused by MAX: {exc}")
                log.warning("bot %s: %s refused: %s", bot.id, item["op"], exc)
            except Exception as exc:  # noqa: BLE001 - unknown failure: keep the reply rather than lose it
                log.warning("bot %s: %s failed, queued: %r", bot.id, item["op"], exc)
                return items[n:]
        return []
