"""Sending what turns committed: replies in order per user, at once by the committer, else by any replica.

A commit queues the turn's replies. If nobody was sending to that user, the commit makes its turn the
claimer and the same process sends at once; otherwise the current claimer picks them up behind what it
is sending. A claim is a lease renewed while its sender works, so a dead sender's queue moves to another
replica within LEASE. A send whose outcome is unknown (the request went out, no answer came) is counted
and logged, and not repeated: repeating it could show the user the same message twice.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import random
import time
from typing import Any, Awaitable, Callable

import httpx

from flows.session import Reply
from server import metrics
from server.egress import ActionReply, Allow, EgressRefused, post_action
from server.runtime.catalog import BotInfo, Catalog
from server.runtime.loop import repeat
from server.runtime.max_client import MaxApiError, MaxClient
from server.runtime.max_format import message_body
from server.runtime.stores.base import Ack, Claim, DialogStore, Next, StoreUnavailable, new_token

log = logging.getLogger("botflow.runtime.outbox")

GIVE_UP = 24 * 3600.0  # replies and actions older than this are dropped (and logged)
LEASE = 5.0  # a claim on a user's outbox, renewed every HOLD_EVERY while its sender works
HOLD_EVERY = LEASE / 4
ACTION_LEASE = 30.0  # longer than an action's POST may take (ACTION_TIMEOUT), so it needs no renewal
ACTION_TIMEOUT = 10.0
# A send slower than this makes the next turns' sends run as tasks their webhooks wait for at most
# dispatch.REPLY_WAIT, for SLOW_FOR seconds; otherwise a webhook sends its replies itself.
SLOW_SEND = 0.5
# A reserved rate slot this close is taken at once: a sleep that short costs an event-loop pass per send
# and the loop's timers are no finer anyway; slots are absolute times, so the error never accumulates.
SLOT_GRAIN = 0.001
SLOW_FOR = 10.0


def backoff(attempts: int) -> float:
    """Seconds before the next attempt: 1, 2, 4 ... capped at 5 minutes, with jitter."""
    return min(300.0, 2.0 ** max(0, attempts - 1)) * random.uniform(0.8, 1.2)


class MaxSender:
    """Turns outbox items into MAX calls."""

    def __init__(self, client: MaxClient) -> None:
        self.client = client

    async def __call__(self, bot: BotInfo, item: dict[str, Any]) -> None:
        if not bot.token:
            raise MaxApiError(None, "no.token", f"bot {bot.id} has no token", False)
        if item["op"] == "answer":
            await self.client.answer_callback(bot.token, item["callback_id"], notification=item.get("notification"),
                                              answer=False)
            return
        body = message_body(Reply(item["text"], item.get("buttons") or []))
        if item.get("chat_id") is not None:
            await self.client.send_message(bot.token, chat_id=item["chat_id"], body=body, answer=False)
        else:
            await self.client.send_message(bot.token, user_id=item["user_id"], body=body, answer=False)


SENT, DONE, RETRY = "sent", "done", "retry"
SEND_SECONDS = {op: metrics.REPLY_SEND_SECONDS.labels(op=op) for op in ("send", "answer")}


async def _nothing() -> None:
    """What `Outbox.start` hands back when its caller does not wait."""


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


class Outbox:
    """Sends users' queues (one sender per user at a time) and posts webhook actions.

    A user's queue is sent from here as a chain: the committer's sends, then whatever later commits
    queued behind them, until the queue is empty or a send must wait for a retry. With a store that
    batches acks, a sent item is acknowledged together with other users' in one call per event-loop
    pass, and the chain goes on from that call's answer.
    """

    def __init__(self, store: DialogStore, catalog: Catalog, send: Callable[..., Any], http: httpx.AsyncClient,
                 limiter: Any, *, allow: Allow = Allow(), clock: Callable[[], float] = time.time,
                 interval: float = 0.5) -> None:
        self.store = store
        self.allow = allow  # BOTFLOW_ACTION_ALLOW: internal hosts actions may reach anyway
        self.catalog = catalog
        self.send = send
        self.http = http
        self.limiter = limiter
        self.clock = clock
        self.interval = interval
        self.owner = new_token()  # claims this replica's poller takes
        self.working: dict[tuple[str, str], str] = {}  # chains running here -> their claim's owner token
        self._ends: dict[tuple[str, str], asyncio.Future[None]] = {}  # resolved when a chain ends
        self._acks: dict[tuple[str, str], tuple[str, list[str]]] = {}  # sent, not yet acknowledged
        self._flushing = False
        self._active: set[tuple[str, str]] = set()  # users with a drain sending right now
        self._tasks: set[asyncio.Task[Any]] = set()
        self._replies = metrics.Children(metrics.REPLIES)
        self._rate_waits = metrics.Children(metrics.RATE_LIMIT_WAIT_SECONDS)
        self.waits = Waits()
        self._slow_until = 0.0  # monotonic time until which sends count as slow (see start)

    def _count(self, bot: str, result: str) -> None:
        self._replies(bot, result).inc()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _begin_chain(self, key: tuple[str, str], owner: str) -> None:
        self.working[key] = owner  # its end future is made only if a turn waits for it (settle)

    def _end_chain(self, key: tuple[str, str], owner: str) -> None:
        if self.working.get(key) == owner:
            del self.working[key]
            end = self._ends.pop(key, None)
            if end is not None and not end.done():
                end.set_result(None)

    def start(self, bot: BotInfo, user: str, owner: str, first: Next, wait: float) -> Awaitable[None]:
        """Send a commit's queue (`first`, then `first.more`) now; the caller holds the claim as `owner`.

        The caller awaits what this returns, at most `wait` seconds of those sends; they go on after that
        on their own. (A plain function: the usual case hands back the drain itself, one coroutine fewer.)
        """
        self._begin_chain((bot.id, user), owner)
        if wait > 0 and not first.more and self._slow_until < time.monotonic():
            # One send while MAX answers quickly: from the caller's own coroutine, which costs a third of
            # a turn less than a task and a bounded wait. Should MAX stall right now, this caller waits for
            # that one send (no lock is held); the sends after it see the slowness and take the bounded
            # path. A turn with several sends always takes it: their waits add up.
            return self._drain(bot.id, user, owner, first=first, bot=bot, inline=True)
        task = self._spawn(self._drain(bot.id, user, owner, first=first, bot=bot))
        return self.waits.within(task, wait) if wait > 0 else _nothing()

    async def settle(self, bot_id: str, user: str, wait: float) -> None:
        """Wait at most `wait` seconds for this replica's chain of the user's queue, if there is one
        (a turn whose replies queued behind that chain's)."""
        key = (bot_id, user)
        if key in self.working and wait > 0:
            end = self._ends.get(key)
            if end is None:
                end = self._ends[key] = asyncio.get_running_loop().create_future()
            await self.waits.within(end, wait)

    async def send_now(self, bot: BotInfo, item: dict[str, Any]) -> None:
        """A call nothing depends on (a duplicate press acknowledged again): not queued, failures logged."""
        await self._deliver(bot, item)

    async def run(self) -> None:
        """Poll forever for due queues (retries, lapsed claims) and actions; sends run as their own tasks."""
        await repeat("outbox", self.pass_once, self.interval, log)

    async def hold(self) -> None:
        """Renew this replica's claims forever, so no other replica takes a queue still being worked."""
        await repeat("outbox claims", self.hold_once, HOLD_EVERY, log)

    async def hold_once(self) -> None:
        by_owner: dict[str, list[tuple[str, str]]] = {}
        for key, owner in list(self.working.items()):
            by_owner.setdefault(owner, []).append(key)
        until = self.clock() + LEASE
        for owner, keys in by_owner.items():
            await self.store.outbox_hold(keys, owner, until)

    async def pass_once(self) -> None:
        now = self.clock()
        for claim in await self.store.outbox_claim(now, LEASE, self.owner):
            self._begin_chain((claim.bot, claim.user), self.owner)
            self._spawn(self._drain(claim.bot, claim.user, self.owner, claim))
        for item in await self.store.actions_due(now, ACTION_LEASE):
            self._spawn(self._action(item))

    async def stop(self, grace: float = 3.0) -> None:
        """Give sends in flight `grace` seconds, then stop them: what they leave is committed and resumed
        by another replica (or this one after a restart) once its claim lapses."""
        deadline = time.monotonic() + grace
        while (self._tasks or self._acks) and time.monotonic() < deadline:
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=max(0.0, deadline - time.monotonic()))
            if self._acks and not self._flushing:
                await self._flush()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _keep_ack(self, key: tuple[str, str], owner: str, ids: list[str], first: bool = False) -> None:
        """Add acks of `owner`'s chain to the pending batch (`first`: ahead of those already there).

        A user has one pending owner. When the queue's claim lapsed and was taken again (by this replica's
        own poller, say, after an outage), the chain `working` names is the one whose acks count: the
        others' would be ignored by the store, and merged under the old owner they hid the new chain's ack,
        so its claim was renewed forever with nothing sent behind it.
        """
        pending = self._acks.get(key)
        if pending is not None and pending[0] == owner:
            if first:
                pending[1][:0] = ids
            else:
                pending[1].extend(ids)
        elif pending is None or owner == self.working.get(key):
            self._acks[key] = (owner, list(ids))

    def _ack_later(self, key: tuple[str, str], owner: str, item_id: str) -> None:
        """Queue the ack of a sent item for this pass's batch."""
        self._keep_ack(key, owner, [item_id])
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(lambda: self._spawn(self._flush()))

    async def _flush(self) -> None:
        """Acknowledge every pending sent item in one store call; chains with more to send go on."""
        acks, self._acks = self._acks, {}
        try:
            more = await self.store.outbox_acks([Ack(b, u, owner, tuple(ids)) for (b, u), (owner, ids) in acks.items()])
        except Exception as exc:  # noqa: BLE001 - acks dropped here would stall every chain in them for good
            if isinstance(exc, StoreUnavailable):
                metrics.STORE_ERRORS.labels(store=self.store.name).inc()
                log.warning("outbox acks paused, storage unreachable: %s", exc,
                            extra={"event": "outbox_paused", "outcome": "store_error"})
            else:
                log.error("outbox acks failed; kept and tried again", exc_info=True,
                          extra={"event": "outbox_paused", "outcome": "error"})
            for key, (owner, ids) in acks.items():  # keep them; the claims lapse if this lasts
                self._keep_ack(key, owner, ids, first=True)
            await asyncio.sleep(0.5)
            more = None
        finally:
            self._flushing = False
            if self._acks:
                self._flushing = True
                asyncio.get_running_loop().call_soon(lambda: self._spawn(self._flush()))
        if more is None:
            return
        going = {(bot, user): nxt for bot, user, nxt in more}
        for key, (owner, _) in acks.items():
            nxt = going.get(key)
            if nxt is None:
                self._end_chain(key, owner)
            elif self.working.get(key) == owner and key not in self._active and key not in self._acks:
                # Nothing else carries this chain on: a drain still sending, or acks after these, decide later.
                self._spawn(self._drain(key[0], key[1], owner, first=nxt))

    async def _drain(self, bot_id: str, user: str, owner: str, claim: Claim | None = None,
                     first: Next | None = None, bot: BotInfo | None = None, inline: bool = False) -> None:
        """Send the user's queue from its head; stop at a retry, so order holds (`bot`: its settings, when
        the caller has them; `inline`: a turn awaits this for its one send, so later turns' sends go on
        in a task of their own)."""
        key = (bot_id, user)
        batched = self.store.batches_acks
        ended = True
        self._active.add(key)
        try:
            if first is None:
                head = await self.store.outbox_head(bot_id, user)
                first = Next(head) if head is not None else await self.store.outbox_done(bot_id, user, "", owner)
            known = [first, *first.more] if first is not None else []
            position = 0
            if bot is None and known:
                bot = await self.catalog.bot(bot_id)
            while position < len(known):
                sending = known[position]
                position += 1
                item = sending.item
                if claim is not None and claim.taken_over:
                    # The previous sender stopped renewing (a crash, an outage) and may have sent this one.
                    claim = None
                    self._count(bot_id, "unknown_outcome")
                    log.warning("took over the outbox of a sender that stopped; its %s may already be sent",
                                item["op"], extra={"event": "outbox_takeover", "bot": bot_id, "user": user,
                                                   "outcome": "unknown_outcome"})
                queued = item.get("queued")
                if bot is None or (queued is not None and self.clock() - queued > GIVE_UP):
                    log.warning("dropping an undeliverable %s", item["op"],
                                extra={"event": "send_dropped", "bot": bot_id, "user": user, "outcome": "dropped"})
                    outcome, wait = DONE, 0.0
                else:
                    outcome, wait = await self._deliver(bot, item, user, sending.slot_at)
                if outcome == RETRY:
                    if key in self._acks:  # what went out before it must leave the queue first
                        await self._flush_one(key)
                    item["attempts"] = item.get("attempts", 0) + 1
                    ended = True
                    await self.store.outbox_later(bot_id, user, item,
                                                  self.clock() + max(wait, backoff(item["attempts"])), owner)
                    return
                if batched:
                    self._ack_later(key, owner, item["id"])
                    ended = False  # the batch's answer ends the chain or carries it on
                elif position == len(known):
                    following = await self.store.outbox_done(bot_id, user, item["id"], owner)
                    if following is not None and inline:
                        ended = False  # the chain goes on without keeping its caller waiting
                        self._spawn(self._drain(bot_id, user, owner, first=following, bot=bot))
                        return
                    if following is not None:
                        known.append(following)
                elif await self.store.outbox_done(bot_id, user, item["id"], owner) is None:
                    return  # the claim moved on (it lapsed): the new claimer sends the rest
        except StoreUnavailable as exc:  # the claim lapses; this or another replica resumes after LEASE
            metrics.STORE_ERRORS.labels(store=self.store.name).inc()
            log.warning("outbox paused, storage unreachable: %s", exc,
                        extra={"event": "outbox_paused", "bot": bot_id, "user": user, "outcome": "store_error"})
            ended = True
        finally:
            self._active.discard(key)
            if ended:
                self._end_chain(key, owner)

    async def _flush_one(self, key: tuple[str, str]) -> None:
        """Acknowledge one user's pending sent items now (before its head is rescheduled)."""
        owner, ids = self._acks.pop(key)
        await self.store.outbox_acks([Ack(key[0], key[1], owner, tuple(ids))])

    async def _deliver(self, bot: BotInfo, item: dict[str, Any], user: str | None = None,
                       slot_at: float | None = None) -> tuple[str, float]:
        """One MAX call under the bot's shared rate: (SENT | DONE | RETRY, seconds to wait before a retry).

        `slot_at`: when (time.monotonic()) the rate slot the store already reserved for it comes; None
        asks the limiter.
        """
        if slot_at is None:
            waited = await self.limiter.acquire(bot.id)
        elif (waited := slot_at - time.monotonic()) > SLOT_GRAIN:
            await asyncio.sleep(waited)
        else:
            waited = 0.0  # that close (or past), it goes at once: nothing was waited
        if waited > 0:
            self._rate_waits(bot.id).inc(waited)
        started = time.perf_counter()
        try:
            try:
                await self.send(bot, item)
            finally:  # a slow send makes the next turns' sends run as tasks for SLOW_FOR seconds (see start)
                elapsed = time.perf_counter() - started
                if elapsed > SLOW_SEND:
                    self._slow_until = time.monotonic() + SLOW_FOR
        except MaxApiError as exc:
            SEND_SECONDS[item["op"]].observe(elapsed)
            extra = {"event": "send", "bot": bot.id, "user": user}
            if exc.unknown:
                self._count(bot.id, "unknown_outcome")
                log.warning("%s may or may not have reached MAX; not repeated: %s", item["op"], exc,
                            extra={**extra, "outcome": "unknown_outcome"})
                return DONE, 0.0
            if exc.retryable:
                if exc.retry_after:
                    await self.limiter.hold(bot.id, exc.retry_after)
                self._count(bot.id, "retried")
                log.info("%s refused for now, retried later: %s", item["op"], exc,
                         extra={**extra, "outcome": "retried"})
                return RETRY, exc.retry_after or 0.0
            self._count(bot.id, "refused")
            log.warning("%s refused by MAX: %s", item["op"], exc, extra={**extra, "outcome": "refused"})
            return DONE, 0.0
        except Exception as exc:  # noqa: BLE001 - unknown failure before any answer: keep the reply, retry
            self._count(bot.id, "retried")
            log.warning("%s failed, retried later: %r", item["op"], exc,
                        extra={"event": "send", "bot": bot.id, "user": user, "outcome": "retried"})
            return RETRY, 0.0
        SEND_SECONDS[item["op"]].observe(elapsed)
        self._count(bot.id, "sent")
        return SENT, 0.0

    async def post_action(self, url: str, data: Any) -> ActionReply:
        """The one place a webhook action leaves the process: never to an internal address, answer capped."""
        return await post_action(url, data, allow=self.allow, timeout=ACTION_TIMEOUT, client=self.http)

    async def _action(self, item: dict[str, Any]) -> None:
        """POST the dialog data to the action's URL; retried with backoff for up to a day."""
        blocked = False
        try:
            response = await self.post_action(item["url"], item["data"])
            if response.status_code < 300:
                metrics.ACTIONS.labels(result="sent").inc()
                await self.store.action_done(item["id"])
                return
            permanent = 400 <= response.status_code < 500 and response.status_code not in (408, 425, 429)
            problem = f"HTTP {response.status_code}"
        except EgressRefused as exc:  # an internal address stays internal: retrying cannot help
            permanent, problem, blocked = True, str(exc), True
        except httpx.HTTPError as exc:
            permanent, problem = False, f"{type(exc).__name__}: {exc}"
        except StoreUnavailable:
            return  # the claim comes back after ACTION_LEASE
        item["attempts"] = item.get("attempts", 0) + 1
        try:
            if permanent or self.clock() - item.get("created", self.clock()) > GIVE_UP:
                metrics.ACTIONS.labels(result="blocked" if blocked else "refused").inc()
                log.warning("webhook action to %s abandoned after %d attempts (%s)", item["url"], item["attempts"],
                            problem, extra={"event": "action", "bot": item.get("bot"), "outcome": "refused"})
                await self.store.action_done(item["id"])
                return
            metrics.ACTIONS.labels(result="retried").inc()
            await self.store.action_later(item, self.clock() + backoff(item["attempts"]))
        except StoreUnavailable:
            pass  # the claim comes back after ACTION_LEASE
