"""Sending what turns committed: replies in order per user, at once by the committer, else by any replica.

A commit queues the turn's replies. If nobody was sending to that user, the commit makes its turn the
claimer and the same process sends at once; otherwise the current claimer picks them up behind what it
is sending. A claim is a lease renewed while its sender works, so a dead sender's queue moves to another
replica within LEASE. A send whose outcome is unknown (the request went out, no answer came) is counted
and logged, and not repeated: repeating it could show the user the same message twice.

Sends are fenced: a sender calls the messenger only while it can prove it still holds the claim. Every answer that
proves it (the commit, an ack, a renewal) says until when, on this process's monotonic clock counted from
before the request went out; right before each call the sender checks that time, and past it asks the
store again (the claim's owner token is the fencing token) or stops. A sender that paused, lost the store
or was overtaken therefore makes no call after its claim could have moved on, except the one call it had
already begun, which is counted and logged as an unknown outcome.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable, Protocol

import httpx

from server import metrics
from server.channels.base import SendError
from server.egress import ActionReply, Allow, post_action
from server.runtime import actions
from server.runtime.actions import GIVE_UP, backoff
from server.runtime.catalog import BotInfo, Catalog
from server.runtime.loop import repeat
from server.runtime.waits import Waits
from server.runtime.stores import ports
from server.runtime.stores.base import Ack, Claim, Next, StoreUnavailable, held_until, new_token

log = logging.getLogger("botflow.runtime.outbox")


class OutboxStore(ports.Outbox, ports.Actions, Protocol):
    """The two ports a sender works: users' send queues and webhook actions."""

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
# A reserved slot missed by more than this (this process stood still) is not used: the sends of a stall
# would leave at once and crowd the next second where MAX counts them; such a send reserves a new slot.
LATE_SLOT = 0.05
SLOW_FOR = 10.0


SENT, DONE, RETRY, FENCED = "sent", "done", "retry", "fenced"
SEND_SECONDS = {op: metrics.REPLY_SEND_SECONDS.labels(op=op) for op in ("send", "answer")}


async def _nothing() -> None:
    """What `Outbox.start` hands back when its caller does not wait."""


class Outbox:
    """Sends users' queues (one sender per user at a time) and posts webhook actions.

    A user's queue is sent from here as a chain: the committer's sends, then whatever later commits
    queued behind them, until the queue is empty or a send must wait for a retry. With a store that
    batches acks, a sent item is acknowledged together with other users' in one call per event-loop
    pass, and the chain goes on from that call's answer.
    """

    def __init__(self, store: OutboxStore, catalog: Catalog, send: Callable[..., Any], http: httpx.AsyncClient,
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
        self.working: dict[tuple[str, str], str] = {}  # chains running here -> their claim's owner token
        # chains running here -> until when (time.monotonic()) their claim is proved theirs (the fence)
        self._held: dict[tuple[str, str], float] = {}
        self._ends: dict[tuple[str, str], asyncio.Future[None]] = {}  # resolved when a chain ends
        self._acks: dict[tuple[str, str], tuple[str, list[str]]] = {}  # sent, not yet acknowledged
        self._flushing = False
        self._active: set[tuple[str, str]] = set()  # users with a drain sending right now
        self._tasks: set[asyncio.Task[Any]] = set()
        self._replies = metrics.Children(metrics.REPLIES)
        self._rate_limited = metrics.Children(metrics.MAX_RATE_LIMITED)
        self._rate_waits = metrics.Children(metrics.RATE_LIMIT_WAIT_SECONDS)
        self.waits = Waits()
        self._slow_until = 0.0  # monotonic time until which sends count as slow (see start)
        self._away = False  # the last outbox pass could not reach the store
        self._quiet_until = 0.0  # monotonic time until which this replica takes over no lapsed claim

    def _count(self, bot: str, result: str) -> None:
        self._replies(bot, result).inc()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _begin_chain(self, key: tuple[str, str], owner: str, held: float) -> None:
        self.working[key] = owner  # its end future is made only if a turn waits for it (settle)
        self._held[key] = held

    def _end_chain(self, key: tuple[str, str], owner: str) -> None:
        if self.working.get(key) == owner:
            del self.working[key]
            self._held.pop(key, None)
            end = self._ends.pop(key, None)
            if end is not None and not end.done():
                end.set_result(None)

    def start(self, bot: BotInfo, user: str, owner: str, first: Next, wait: float) -> Awaitable[None]:
        """Send a commit's queue (`first`, then `first.more`) now; the caller holds the claim as `owner`.

        The caller awaits what this returns, at most `wait` seconds of those sends; they go on after that
        on their own. (A plain function: the usual case hands back the drain itself, one coroutine fewer.)
        """
        self._begin_chain((bot.id, user), owner, first.held)
        if wait > 0 and not first.more and self._slow_until < time.monotonic():
            # One send while the messenger answers quickly: from the caller's own coroutine, which costs a third of
            # a turn less than a task and a bounded wait. Should it stall right now, this caller waits for
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
        for owner, keys in by_owner.items():
            await self._renew(keys, owner)

    async def _renew(self, keys: list[tuple[str, str]], owner: str) -> bool:
        """Renew `owner`'s claims on `keys`: their proofs move on, or (lost) run out. Whether all were held."""
        asked = time.monotonic()
        held = set(await self.store.outbox_hold(keys, owner, self.clock() + LEASE))
        for key in keys:
            if self.working.get(key) == owner:
                self._held[key] = held_until(asked, LEASE) if key in held else 0.0
        return len(held) == len(keys)

    async def pass_once(self) -> None:
        now, asked = self.clock(), time.monotonic()
        owner = new_token()  # a fencing token of its own for each pass's claims: a claim taken again is new
        # Just back from a store this replica could not reach: its holders (here and elsewhere) get a lease
        # to renew their claims and record what they sent before any is taken over.
        take_over = not self._away and asked >= self._quiet_until
        try:
            claims = await self.store.outbox_claim(now, LEASE, owner, take_over=take_over)
        except StoreUnavailable:
            self._away = True
            raise
        if self._away:
            self._away, self._quiet_until = False, time.monotonic() + LEASE
        for claim in claims:
            self._begin_chain((claim.bot, claim.user), owner, held_until(asked, LEASE))
            self._spawn(self._drain(claim.bot, claim.user, owner, claim))
        asked = time.monotonic()
        for item in await self.store.actions_due(now, ACTION_LEASE):
            self._spawn(self._action(item, held_until(asked, ACTION_LEASE)))

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
            more = await self.store.outbox_acks([Ack(b, u, owner, tuple(ids)) for (b, u), (owner, ids) in acks.items()],
                                                LEASE)
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
                continue
            if self.working.get(key) == owner:
                self._held[key] = nxt.held  # the ack proved the claim again
            if self.working.get(key) == owner and key not in self._active and key not in self._acks:
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
        unacked = None  # a sent item whose ack has not reached the store yet (unbatched stores)
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
                    outcome, wait = await self._deliver(bot, item, user, sending.slot_at, key, owner)
                    while outcome == FENCED:
                        if not await self._prove(key, owner, item):
                            ended = True
                            return  # overtaken: the new claimer sends the rest
                        outcome, wait = await self._deliver(bot, item, user, sending.slot_at, key, owner)
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
                    unacked = item["id"]
                    following = await self.store.outbox_done(bot_id, user, item["id"], owner, LEASE)
                    unacked = None
                    if following is not None and self.working.get(key) == owner:
                        self._held[key] = following.held
                    if following is not None and inline:
                        ended = False  # the chain goes on without keeping its caller waiting
                        self._spawn(self._drain(bot_id, user, owner, first=following, bot=bot))
                        return
                    if following is not None:
                        known.append(following)
                else:
                    unacked = item["id"]
                    following = await self.store.outbox_done(bot_id, user, item["id"], owner, LEASE)
                    unacked = None
                    if following is None:
                        return  # the claim moved on (it lapsed): the new claimer sends the rest
                    if self.working.get(key) == owner:
                        self._held[key] = following.held
        except StoreUnavailable as exc:  # the claim lapses; this or another replica resumes after LEASE
            metrics.STORE_ERRORS.labels(store=self.store.name).inc()
            log.warning("outbox paused, storage unreachable: %s", exc,
                        extra={"event": "outbox_paused", "bot": bot_id, "user": user, "outcome": "store_error"})
            ended = True
            if unacked is not None:  # it went out: remembered, and recorded once the store answers
                self._ack_later(key, owner, unacked)
                ended = False  # the ack's answer ends the chain or carries it on
        finally:
            self._active.discard(key)
            if ended:
                self._end_chain(key, owner)

    async def _prove(self, key: tuple[str, str], owner: str, item: dict[str, Any]) -> bool:
        """Ask the store whether `owner` still holds the claim (its proof ran out: a long rate wait, a
        pause, the store away); False: it does not, and this chain stops before its call."""
        if self.working.get(key) == owner and await self._renew([key], owner):
            return True
        log.warning("stopped before sending a %s: the claim on this outbox is no longer this sender's "
                    "(it paused, lost the store or was overtaken); its new claimer sends the rest", item["op"],
                    extra={"event": "send_fenced", "bot": key[0], "user": key[1], "outcome": "fenced"})
        return False

    async def _flush_one(self, key: tuple[str, str]) -> None:
        """Acknowledge one user's pending sent items now (before its head is rescheduled)."""
        owner, ids = self._acks.pop(key)
        await self.store.outbox_acks([Ack(key[0], key[1], owner, tuple(ids))])

    async def _deliver(self, bot: BotInfo, item: dict[str, Any], user: str | None = None,
                       slot_at: float | None = None, key: tuple[str, str] | None = None,
                       owner: str = "") -> tuple[str, float]:
        """One messenger call under the bot's shared rate: (SENT | DONE | RETRY, seconds to wait before a retry),
        or FENCED: the claim of `key`'s chain (`owner`) was not proved its own right before the call.

        `slot_at`: when (time.monotonic()) the rate slot the store already reserved for it comes; None
        asks the limiter.
        """
        moment = time.monotonic()
        if slot_at is None or slot_at < moment - LATE_SLOT:
            waited = await self.limiter.acquire(bot.id)
        elif (waited := slot_at - moment) > SLOT_GRAIN:
            await asyncio.sleep(waited)
            if time.monotonic() - slot_at > LATE_SLOT:  # woken late: the slot went by meanwhile
                waited += await self.limiter.acquire(bot.id)
        else:
            waited = 0.0  # that close (or past), it goes at once: nothing was waited
        if waited > 0:
            self._rate_waits(bot.id).inc(waited)
        # The fence, right before the call: the chain's claim is still proved its own (no round trip).
        if key is not None and (self.working.get(key) != owner or time.monotonic() >= self._held.get(key, 0.0)):
            return FENCED, 0.0
        started = time.perf_counter()
        try:
            try:
                await self.send(bot, item)
            finally:  # a slow send makes the next turns' sends run as tasks for SLOW_FOR seconds (see start)
                elapsed = time.perf_counter() - started
                if elapsed > SLOW_SEND:
                    self._slow_until = time.monotonic() + SLOW_FOR
        except SendError as exc:
            SEND_SECONDS[item["op"]].observe(elapsed)
            extra = {"event": "send", "bot": bot.id, "user": user}
            if exc.unknown:
                self._count(bot.id, "unknown_outcome")
                log.warning("%s may or may not have reached the messenger; not repeated: %s", item["op"], exc,
                            extra={**extra, "outcome": "unknown_outcome"})
                return DONE, 0.0
            if exc.status == 429:
                self._rate_limited(bot.id).inc()
            if exc.retryable:
                if exc.retry_after:
                    await self.limiter.hold(bot.id, exc.retry_after)
                self._count(bot.id, "retried")
                log.info("%s refused for now, retried later: %s", item["op"], exc,
                         extra={**extra, "outcome": "retried"})
                return RETRY, exc.retry_after or 0.0
            self._count(bot.id, "refused")
            log.warning("%s refused by the messenger: %s", item["op"], exc, extra={**extra, "outcome": "refused"})
            return DONE, 0.0
        except Exception as exc:  # noqa: BLE001 - unknown failure before any answer: keep the reply, retry
            self._count(bot.id, "retried")
            log.warning("%s failed, retried later: %r", item["op"], exc,
                        extra={"event": "send", "bot": bot.id, "user": user, "outcome": "retried"})
            return RETRY, 0.0
        SEND_SECONDS[item["op"]].observe(elapsed)
        self._count(bot.id, "sent")
        if key is not None and time.monotonic() >= self._held.get(key, 0.0):
            # Begun under the claim, answered after it could have moved on (this process paused, or the
            # store stayed away): a new claimer may send this too.
            self._count(bot.id, "unknown_outcome")
            log.warning("%s went out while this sender's claim may have lapsed (a pause or a lost store); "
                        "a new claimer may send it again", item["op"],
                        extra={"event": "send_past_claim", "bot": bot.id, "user": user, "outcome": "unknown_outcome"})
        return SENT, 0.0

    async def post_action(self, url: str, data: Any) -> ActionReply:
        """The one place a webhook action leaves the process: never to an internal address, answer capped."""
        return await post_action(url, data, allow=self.allow, timeout=ACTION_TIMEOUT, client=self.http)

    async def _action(self, item: dict[str, Any], held: float = float("inf")) -> None:
        """POST one due webhook action (`actions.deliver`) through this sender's `post_action`."""
        await actions.deliver(self.store, self.post_action, item, held, self.clock)
