"""One turn protocol for every update: lock → load → step → one commit (replies queued) → unlock → send."""
from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any, Callable

from flows.engine import step
from flows.model import Flow
from flows.dialog import Dialog, StepResult, Update
from server import metrics
from server.runtime import funnel_counts, timeline, turn_events
from server.runtime.funnel_counts import Counts
from server.runtime.arms import TAG as ARM_TAG
from server.runtime.catalog import BotInfo, Catalog, Missing
from server.runtime.loop import repeat
from server.runtime.outbox import LEASE as OUTBOX_LEASE, Outbox
from server.runtime.stores.ports import DialogStore
from server.runtime.stores.base import (
    BUSY, DUPLICATE, LOCK_MS, Changed, Loaded, Next, StoreUnavailable, TurnCommit, new_token,
)
from server.channels.base import Incoming
from server.runtime.turn_events import Fold

log = logging.getLogger("botflow.runtime.dispatch")

# While the messenger is slow, how long a webhook waits for its own replies to leave before it answers anyway:
# they are committed, so a slow messenger only delays the answer this long, never the reply's safety.
REPLY_WAIT = 2.0
# A held lock is renewed once a turn has run this long (a slow catalog load, a stalled loop).
RENEW_AFTER = LOCK_MS / 1000 / 3


class UserLocks:
    """In-process FIFO lock per dialog, so one replica queues its own turns instead of polling Redis.

    A held key maps to the futures of the turns waiting for it; an uncontended turn takes and gives
    back its key without a lock object or a suspension (an asyncio.Lock per turn cost a microsecond).
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], collections.deque[asyncio.Future[None]]] = {}

    async def acquire(self, key: tuple[str, str]) -> None:
        waiting = self._held.get(key)
        if waiting is None:
            self._held[key] = collections.deque()
            return
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting.append(handed)
        try:
            await handed
        except BaseException:
            if handed.done() and not handed.cancelled():
                self.release(key)  # the lock reached this turn as it was cancelled: pass it on
            elif handed in waiting:
                waiting.remove(handed)
            raise

    def release(self, key: tuple[str, str]) -> None:
        waiting = self._held[key]
        while waiting:
            handed = waiting.popleft()
            if not handed.done():  # a cancelled waiter's future is done: skip it
                handed.set_result(None)
                return
        del self._held[key]


class Turn:
    """An open turn: the user's lock is held until `Dispatcher.commit` or the end of `Dispatcher.opened`."""

    __slots__ = ("bot", "user", "token", "loaded", "closed", "queued", "first", "started")

    def __init__(self, bot: str, user: str) -> None:
        self.bot, self.user, self.token = bot, user, new_token()
        self.loaded = Loaded(BUSY)
        self.closed = False  # committed, released, or never locked (a duplicate)
        self.queued = False  # the commit queued sends
        self.first: Next | None = None  # the commit made this turn the sender of the user's outbox
        self.started = time.monotonic()

    @property
    def duplicate(self) -> bool:
        return self.loaded.status == DUPLICATE


def opening_items(user: str, chat: int | None, callback_id: str | None, now: float,
                  edit: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The messenger calls a turn makes before its replies: the press acknowledgement (with `edit`, what
    becomes of the pressed message's buttons)."""
    if callback_id is None:
        return []
    answer = {"id": new_token(), "op": "answer", "callback_id": callback_id, "queued": now}
    if edit is not None:
        answer["edit"] = edit
    return [answer]


def lost_place(flow: Flow, user: str, chat: int | None, now: float) -> dict[str, Any]:
    """The flow's "we lost your place" message, sent before a lost dialog starts again."""
    return {"id": new_token(), "op": "send", "chat_id": chat, "user_id": int(user) if chat is None else None,
            "text": flow.settings.lost_place, "buttons": [], "queued": now}


class Dispatcher:
    """Runs turns for webhooks, timers, API events and publishes against one store."""

    def __init__(self, store: DialogStore, catalog: Catalog, outbox: Outbox, *,
                 clock: Callable[[], float] = time.time, lock_wait: float = 10.0,
                 reply_wait: float = REPLY_WAIT) -> None:
        self.store = store
        self.catalog = catalog
        self.outbox = outbox
        self.clock = clock
        self.lock_wait = lock_wait
        self.reply_wait = reply_wait
        self.locks = UserLocks()
        self.counting = funnel_counts.enabled()
        self.held: dict[tuple[str, str], Turn] = {}
        self._store_errors = metrics.STORE_ERRORS.labels(store=store.name)
        self._turn_seconds = metrics.Children(metrics.TURN_SECONDS)

    async def _begin(self, turn: Turn, dedupe: str | None, loaded: Loaded) -> Loaded:
        """The store's begin polled while another replica holds the lock (`loaded`: the answer so far)."""
        if loaded.status != BUSY:
            return loaded
        # Another replica holds the dialog: poll with a short, growing pause.
        metrics.LOCK_BUSY.inc()
        waited = time.monotonic()
        deadline, pause = waited + self.lock_wait, 0.002
        while loaded.status == BUSY:
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"dialog {turn.bot}/{turn.user} stayed locked for {self.lock_wait} s")
            await asyncio.sleep(min(pause, loaded.retry_ms / 1000))
            pause = min(pause * 2, 0.05)
            loaded = await self.store.begin(turn.bot, turn.user, turn.token, dedupe)
        metrics.LOCK_WAIT_SECONDS.observe(time.monotonic() - waited)
        return loaded

    def opened(self, bot_id: str, user: str, dedupe: str | None = None, optimistic: bool = False) -> Opened:
        """The one way into a dialog: its lock is held inside the block and always let go after it.

        Inside, `commit` saves the turn; leaving without a commit releases the lock unchanged. A duplicate
        delivery (`turn.duplicate`) holds no lock at all. Nothing inside may wait on the messenger or a webhook.
        `optimistic`: the dialog may be read unlocked (see `ports.DialogTurns.begin`); `commit` then raises
        Changed when it was not as read, and the block steps again from `turn.loaded` (`_run` does).
        """
        return Opened(self, bot_id, user, dedupe, optimistic)

    async def commit(self, turn: Turn, write: TurnCommit) -> None:
        """Save the turn (dialog, mark, timeline, timers, replies, actions) at once and unlock."""
        if write.counts is None and self.counting:
            write.counts = Counts([])  # nothing to count, but the store keeps its expiry record in step
        try:
            turn.first = await self.store.commit(turn.bot, turn.user, turn.token, write, turn.loaded)
        except StoreUnavailable:
            self._store_errors.inc()
            raise
        turn.closed = True
        turn.queued = bool(write.outbox)
        # With BOTFLOW_REDIS_MIN_REPLICAS: no reply leaves and no 200 is given before the replicas hold the
        # turn. Past the wait the turn stays saved (its replies go out once its claim lapses) and the
        # webhook answers 503; MAX's redelivery is then a duplicate.
        if self.store.min_replicas:
            await self.store.replicated()

    async def erase(self, bot_id: str, user: str) -> dict[str, int]:
        """Forget one user's dialog data under their lock, so a turn in flight cannot write it back."""
        async with self.opened(bot_id, user) as turn:
            try:
                erased = await self.store.erase(bot_id, user, turn.token, turn.loaded)
            except StoreUnavailable:
                self._store_errors.inc()
                raise
            turn.closed = True
        return erased

    async def keep_locks(self) -> None:
        """Renew the locks of turns running longer than RENEW_AFTER, forever (a background loop)."""
        await repeat("lock renewal", self._renew_once, RENEW_AFTER / 2, log)

    async def _renew_once(self) -> None:
        now = time.monotonic()
        for turn in [t for t in self.held.values()
                     if not t.closed and t.loaded.locked and now - t.started > RENEW_AFTER]:
            if not await self.store.renew(turn.bot, turn.user, turn.token):
                log.warning("lock of %s/%s lost during a slow turn", turn.bot, turn.user,
                            extra={"event": "lock_lost", "bot": turn.bot, "user": turn.user})

    async def _sent(self, bot: BotInfo, turn: Turn, wait: float) -> None:
        """After the commit: send what it queued at once, waiting at most `wait` for it."""
        if turn.first is not None:
            await self.outbox.start(bot, turn.user, turn.token, turn.first, wait)
        elif turn.queued:
            await self.outbox.settle(bot.id, turn.user, wait)

    async def handle(self, bot: BotInfo, incoming: Incoming) -> StepResult | None:
        """A webhook delivery; None for a duplicate or a bot that serves nothing yet."""
        started = time.perf_counter()
        async with self.opened(bot.id, incoming.user, incoming.dedupe, optimistic=True) as turn:
            if not turn.duplicate:
                result = await self._run(bot, turn, incoming.update, chat=incoming.chat_id, dedupe=incoming.dedupe,
                                         callback_id=incoming.callback_id, pressed=incoming.pressed)
        if turn.duplicate:
            metrics.DUPLICATE_DELIVERIES.labels(bot=bot.id).inc()
            self._observe(incoming.update, "duplicate", started, bot, turn)
            if incoming.callback_id is not None:  # the client is still waiting: acknowledge again
                await self.outbox.send_now(bot, {"id": turn.token, "op": "answer",
                                                 "callback_id": incoming.callback_id})
            return None
        self._observe(incoming.update, result.outcome if result else "no_flow", started, bot, turn)
        await self._sent(bot, turn, self.reply_wait)
        return result

    async def turn(self, bot: BotInfo, user: str, update: Update, *, require_dialog: bool = False,
                   require_fire: bool = False, wait: float | None = None) -> tuple[str, StepResult | None]:
        """A turn not from a webhook (timer tick, API event); returns (status, result).

        status: "ok", "no_dialog" (require_dialog and none exists), "not_fired" (require_fire and no
        transition took the update: nothing was written). `wait` bounds the wait for its replies.
        """
        started = time.perf_counter()
        status, result = "ok", None
        async with self.opened(bot.id, user) as turn:
            if require_dialog and turn.loaded.dialog is None:
                status = "no_dialog"
            else:
                result = await self._run(bot, turn, update, require_fire=require_fire)
                if require_fire and (result is None or result.transition is None):
                    status = "not_fired"
        self._observe(update, status if status != "ok" else (result.outcome if result else "no_flow"),
                      started, bot, turn)
        await self._sent(bot, turn, self.reply_wait if wait is None else wait)
        return status, result

    def _observe(self, update: Update, outcome: str, started: float, bot: BotInfo, turn: Turn) -> None:
        elapsed = time.perf_counter() - started
        self._turn_seconds(update.kind, outcome).observe(elapsed)
        if log.isEnabledFor(logging.DEBUG):
            stored = turn.loaded.dialog or {}
            log.debug("turn", extra={"event": "turn", "bot": bot.id, "flow": stored.get("flow"),
                                     "version": stored.get("version"), "user": turn.user, "outcome": outcome,
                                     "duration_ms": round(elapsed * 1000, 3)})

    async def _run(self, bot: BotInfo, turn: Turn, update: Update, *, chat: int | None = None,
                   dedupe: str | None = None, callback_id: str | None = None,
                   require_fire: bool = False, pressed: dict[str, Any] | None = None) -> StepResult | None:
        """Step the loaded dialog and commit; a dialog read unlocked that changed meanwhile is stepped
        again from what the commit found (None when that says the delivery is a duplicate)."""
        while True:
            try:
                return await self._step(bot, turn, update, chat, dedupe, callback_id, require_fire, pressed)
            except Changed as changed:
                try:
                    turn.loaded = await self._begin(turn, dedupe, changed.loaded)
                except StoreUnavailable:
                    self._store_errors.inc()
                    raise
                if turn.duplicate:  # counted as a duplicate delivery by the caller
                    turn.closed = True
                    return None
                metrics.TURNS_RESTEPPED.inc()

    async def _step(self, bot: BotInfo, turn: Turn, update: Update, chat: int | None, dedupe: str | None,
                    callback_id: str | None, require_fire: bool,
                    pressed: dict[str, Any] | None = None) -> StepResult | None:
        """One step from `turn.loaded` and its commit; without a commit the lock is released by `opened`."""
        now = self.clock()
        stored, lost = turn.loaded.dialog, turn.loaded.lost
        had_timer = stored is not None and stored.get("due") is not None
        if lost is not None:  # the store lost the running dialog (or rewound it): it starts again
            stored = None
        dialog = Dialog.from_dict(stored) if stored is not None else None
        catalog = self.catalog  # both versions are nearly always loaded: asked without a coroutine first
        arms = bot.arms
        if arms is None:
            latest = catalog.loaded(bot.flow_id, bot.version)
            if isinstance(latest, Missing):  # (an isinstance check: mypy narrows the type by it)
                latest = await catalog.serving(bot)
        else:  # an experiment runs: a dialog that opens starts on the user's arm
            # A dialog the experiment opened runs on that arm already: no hash on its every turn.
            tagged = stored is not None and stored.get(ARM_TAG) == arms.id
            arm = dialog.version if tagged else arms.version_for(bot.id, turn.user)  # type: ignore[union-attr]
            latest = catalog.loaded(arms.flow_id, arm)
            if isinstance(latest, Missing):
                latest = await catalog.flow(arms.flow_id, arm)
        flow = catalog.loaded(dialog.flow, dialog.version) if dialog is not None else None
        if isinstance(flow, Missing):
            flow = await catalog.flow(dialog.flow, dialog.version)  # type: ignore[union-attr]
        if flow is None:
            dialog, flow = None, latest  # never started, or its version is gone
        if flow is None:  # the bot serves nothing (deleted?): a dialog left over is dropped
            items = opening_items(turn.user, chat, callback_id, now)
            if stored is not None or items:
                await self.commit(turn, TurnCommit(None, dedupe=dedupe, outbox=items, outbox_lease=OUTBOX_LEASE))
            return None
        if update.kind == "tick" and stored is not None and stored.get("due") is not None and stored["due"] <= now:
            metrics.TIMER_LAG_SECONDS.observe(now - stored["due"])
        result = step(flow, dialog, update, now, latest=latest)
        if require_fire and result.transition is None:
            return result
        after = result.dialog.to_dict() if result.dialog is not None else None
        if after is not None:
            # No chat is remembered: a reply goes only where its own update came from (or to the user's
            # dialog). The field stays, empty, in the stored shape the store's codec reads fastest.
            after["chat_id"] = None
            # Counted up on every turn, so the store's going back in time shows (`stores.lost`).
            after["turn"] = (lost[1] if lost is not None else (stored.get("turn") or 0) if stored is not None else 0) + 1
        expired = dialog is not None and now >= dialog.updated_at + flow.settings.session_ttl
        live = None if expired else dialog
        commit = TurnCommit(after, dedupe=dedupe, had_timer=had_timer, outbox_lease=OUTBOX_LEASE)
        if self.counting:
            commit.counts = Counts([], prior_gone=live is None)
        if callback_id is not None:  # a press: acknowledged first, with what becomes of its buttons
            edit = None
            if pressed is not None and dialog is not None:
                pressed_in = flow.state(dialog.state)
                if pressed_in is not None and pressed_in.after_press != "keep":
                    edit = {**pressed, "mode": pressed_in.after_press}
            commit.outbox = opening_items(turn.user, chat, callback_id, now, edit)
        if lost is not None:
            commit.outbox.append(lost_place(latest if latest is not None else flow, turn.user, chat, now))
        turn_events.fold(result.events, Fold(commit, turn.bot, turn.user, chat, now, live, commit.counts))
        if arms is not None:
            arms.count(stored, live, result, after, commit.counts, now)
        if not (update.kind == "tick" and result.outcome == "ignored"):
            before = dialog.state if dialog is not None else None
            if bot.masking:
                commit.timeline = timeline.record(now, update, before, result, after, masking=bot.masking,
                                                  flow=flow, before_data=dialog.data if dialog is not None else None)
            else:  # the store keeps the dialog's snapshot beside it (`timeline.as_record`)
                commit.timeline = timeline.brief(now, update, before, result, after)
        await self.commit(turn, commit)
        return result


class Opened:
    """`Dispatcher.opened`'s block: a plain async context manager, as it runs on every update (the
    generator-based kind costs a frame, a generator and contextlib's bookkeeping more per turn)."""

    __slots__ = ("dispatcher", "key", "dedupe", "optimistic", "turn")

    def __init__(self, dispatcher: Dispatcher, bot_id: str, user: str, dedupe: str | None, optimistic: bool) -> None:
        self.dispatcher, self.key, self.dedupe, self.optimistic = dispatcher, (bot_id, user), dedupe, optimistic
        self.turn = Turn(bot_id, user)

    async def __aenter__(self) -> Turn:
        dispatcher, key, turn = self.dispatcher, self.key, self.turn
        await dispatcher.locks.acquire(key)
        try:
            # the store's answer first: `_begin` (one coroutine more) only when another replica holds the lock
            loaded = await dispatcher.store.begin(turn.bot, turn.user, turn.token, self.dedupe,
                                                  optimistic=self.optimistic)
            turn.loaded = loaded if loaded.status != BUSY else await dispatcher._begin(turn, self.dedupe, loaded)
        except BaseException as exc:
            dispatcher.locks.release(key)
            if isinstance(exc, StoreUnavailable):
                dispatcher._store_errors.inc()
            raise
        if turn.duplicate:
            turn.closed = True
        dispatcher.held[key] = turn
        return turn

    async def __aexit__(self, *exc_info: object) -> None:
        dispatcher, key, turn = self.dispatcher, self.key, self.turn
        try:
            dispatcher.held.pop(key, None)
            if not turn.closed:
                turn.closed = True
                try:
                    await dispatcher.store.release(turn.bot, turn.user, turn.token, turn.loaded)
                except StoreUnavailable:  # the lock expires by itself within LOCK_MS
                    dispatcher._store_errors.inc()
        finally:
            dispatcher.locks.release(key)
