"""The one interface every dialog store implements (memory, SQL, Redis)."""
from __future__ import annotations

import itertools
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, NamedTuple

from server.runtime.stores.listing import CountKey, DialogPage, Search
from server.runtime.funnel_counts import Counts

OK, BUSY, DUPLICATE = 0, 1, 2

# Duplicate deliveries are recognised for at least a day (MAX retries for up to 8 hours).
DEDUPE_TTL = 90_000
# A turn does no network I/O besides the store, so a lock needs only seconds; a slow turn renews it
# (`renew`), and a crashed holder's users wait at most this long.
LOCK_MS = 5_000
TIMELINE_CAP = 200
# The outer bound on any timeline record's age; each bot's retention (`forget_timelines`) is shorter.
TIMELINE_TTL = 3650 * 86_400
# Timeline records one move takes (`move_timeline`). Building and binding a move's rows holds the GIL, so
# every webhook in flight waits them out: at 2,000 a move the webhooks' p99 over HTTP was 21-23 ms, at
# 200 12-18 ms, at no more CPU per record (bench/runtime.py --http, interleaved runs).
MOVE_BATCH = 200

_tokens = itertools.count(1)
_process = os.urandom(6).hex()


def new_token() -> str:
    """A lock or claim owner token unique across processes."""
    return f"{_process}:{next(_tokens)}"


class StoreUnavailable(Exception):
    """The storage cannot be reached or refused the call; the webhook answers 503 so MAX retries."""


class LockLost(StoreUnavailable):
    """The lock expired and another holder may have written; nothing was saved."""


class Changed(Exception):
    """An unlocked commit found the dialog changed, locked, or the delivery a duplicate: nothing was saved.

    `loaded` is what `begin` would have answered at that moment (the lock is now held when it is OK), so
    the caller steps again from it instead of making another round trip.
    """

    def __init__(self, loaded: Loaded) -> None:
        super().__init__("the dialog changed since it was read")
        self.loaded = loaded


@dataclass(slots=True)
class Loaded:
    """What `begin` found: the lock status and the dialog."""

    status: int
    session: dict[str, Any] | None = None
    retry_ms: int = 0  # BUSY: how long the current holder may still hold the lock
    handle: Any = None  # store-specific state carried from begin to commit/release
    # False: read from this process's own last write without taking the lock (`begin(optimistic=True)`);
    # the commit then saves only if nothing changed since, else raises Changed.
    locked: bool = True


@dataclass(slots=True)
class Write:
    """Everything one turn saves at once, replies and actions included (they are sent after the commit)."""

    session: dict[str, Any] | None  # None drops the dialog
    ttl: int = 1800
    dedupe: str | None = None
    # The turn's timeline record, or its `timeline.brief` (the record is that with the saved dialog's snapshot).
    timeline: dict[str, Any] | list[Any] | None = None
    timer_due: float | None = None
    had_timer: bool = True  # False: the dialog had no timer scheduled, so there is nothing to unschedule
    outbox: list[dict[str, Any]] = field(default_factory=list)
    outbox_lease: float = 5.0  # how long the committer's claim on the user's outbox lasts unrenewed
    actions: list[dict[str, Any]] = field(default_factory=list)
    # The turn's funnel counter increments; None counts nothing (and keeps no expiry record).
    counts: Counts | None = None


# Next and Ack are made on every turn: named tuples, which cost half what a frozen dataclass does.
class Next(NamedTuple):
    """The send a claimer makes next; `slot_at`: when (time.monotonic()) the bot's rate slot the store
    reserved for it comes (None when the store keeps no rate, and the sender asks its limiter)."""

    item: dict[str, Any]
    slot_at: float | None = None
    more: tuple[Next, ...] = ()  # from a commit: the write's other sends, in order, after this one


class Ack(NamedTuple):
    """Sends of one user's queue that went out, to drop from its head (`outbox_acks`)."""

    bot: str
    user: str
    owner: str
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Claim:
    """A user's outbox handed to one sender; `taken_over` when an earlier claimer stopped renewing it."""

    bot: str
    user: str
    taken_over: bool = False


@dataclass(slots=True)
class Sample:
    """Cheap gauges for /metrics: users with queued sends, the oldest queued send, dialogs per version."""

    outbox_users: int = 0
    outbox_oldest: float | None = None  # `queued` time of the oldest head item seen
    dialogs: dict[tuple[str, str], int] = field(default_factory=dict)  # (bot, version) -> running dialogs


class DialogStore(ABC):
    """Dialogs, locks, duplicate marks, timelines, timers and the outbox behind one interface.

    A turn is `begin` (lock, duplicate check, load) then exactly one of `commit` or `release`. The commit
    queues the turn's replies; whoever holds the user's outbox claim sends them, in order, afterwards.
    Every method raises only StoreUnavailable (and its LockLost) for storage failures.
    """

    name = "store"  # the `store` label of the store's metrics
    # True when `outbox_acks` drops many users' sent items in one call, so senders batch their acks.
    batches_acks = False

    @abstractmethod
    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
                    optimistic: bool = False) -> Loaded:
        """Take the user's lock (BUSY if held), check the duplicate mark, load the dialog.

        `optimistic`: a store that remembers its own last write of this dialog may answer from it without
        taking the lock or checking the mark (`Loaded.locked` False); its commit does both, atomically,
        and raises Changed when the dialog is not as read. Other stores lock as usual.
        """

    @abstractmethod
    async def renew(self, bot: str, user: str, token: str) -> bool:
        """Extend a held lock by LOCK_MS; False when the token no longer owns it."""

    @abstractmethod
    async def commit(self, bot: str, user: str, token: str, write: Write, loaded: Loaded) -> Next | None:
        """Save the turn atomically and release the lock; LockLost if the token no longer owns it, Changed
        if the turn read the dialog unlocked and it changed since (or the delivery is a duplicate).

        A Next (the write's first send) when the write queued sends and nobody was working on the user's
        outbox: the caller now holds that claim (owner `token`, `write.outbox_lease`) and sends at once.
        """

    @abstractmethod
    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        """Release the lock without writing, only if the token still owns it."""

    @abstractmethod
    async def session(self, bot: str, user: str) -> dict[str, Any] | None:
        """The dialog as stored, without locking (inspection)."""

    @abstractmethod
    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        """The user's timeline records, oldest first."""

    @abstractmethod
    def users(self, bot: str) -> AsyncIterator[str]:
        """Users of a bot that have a dialog stored (publish reset/migrate walk them)."""

    @abstractmethod
    def outbox_users(self, bot: str) -> AsyncIterator[str]:
        """Users of a bot with sends queued, whether or not their dialog is still running."""

    @abstractmethod
    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        """Claim dialogs whose timer is due until now + lease; entries whose dialog is gone are dropped."""

    @abstractmethod
    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        """Extend claimed timers still being fired to `until` (never earlier than a newly set due time)."""

    @abstractmethod
    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100) -> list[Claim]:
        """Claim users whose queued sends are due (a retry, or a claim that lapsed) for `owner`."""

    @abstractmethod
    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        """Extend `owner`'s claims to `until`; returns those still held."""

    @abstractmethod
    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        """The oldest queued send of a user."""

    @abstractmethod
    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str) -> Next | None:
        """Drop the head item if it is `item_id`; the next send while more wait and `owner` holds the claim.

        With nothing left the claim ends; a commit that queues later replies makes its turn the new claimer.
        """

    async def outbox_acks(self, acks: list[Ack]) -> list[tuple[str, str, Next]]:
        """`outbox_done` for many users at once; (bot, user, next send) for those whose queue goes on."""
        more = []
        for ack in acks:
            found = None
            for item_id in ack.ids:
                found = await self.outbox_done(ack.bot, ack.user, item_id, ack.owner)
            if found is not None:
                more.append((ack.bot, ack.user, found))
        return more

    @abstractmethod
    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        """Replace the head item (its attempt count changed), end the claim and retry the user's queue at `at`."""

    @abstractmethod
    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        """Claim webhook actions whose attempt is due."""

    @abstractmethod
    async def action_done(self, item_id: str) -> None:
        """Forget a delivered (or abandoned) action."""

    @abstractmethod
    async def action_later(self, item: dict[str, Any], at: float) -> None:
        """Store the action's new attempt count and retry at `at`."""

    @abstractmethod
    async def timeline_users(self, bot: str, limit: int) -> list[str]:
        """Up to `limit` users of the bot that have timeline records (running dialogs or ended ones)."""

    @abstractmethod
    async def sample(self, dialogs: bool = True) -> Sample:
        """Gauges for /metrics; `dialogs=False` skips the per-version count (a scan on Redis)."""

    @abstractmethod
    async def dialog_counts(self, bot: str) -> dict[CountKey, int]:
        """Running dialogs of a bot per (flow, version, state); one pass over the bot's dialogs."""

    @abstractmethod
    async def dialog_page(self, bot: str, search: Search) -> DialogPage:
        """One page of a bot's running dialogs matching `search`; BadSearch for a cursor never handed out.

        A page holds at most `search.limit` dialogs and may hold fewer while `next` is set (Redis bounds
        the keys one call looks through).
        """

    @abstractmethod
    async def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> dict[str, int]:
        """Forget the user (lock held by `token`): dialog, timer, timeline, queued sends, webhook actions and
        duplicate marks kept by user; releases the lock. How many of each went; LockLost if not held."""

    @abstractmethod
    async def forget_timelines(self, cutoffs: dict[str, float], default: float) -> int:
        """Delete timeline records older than their bot's cutoff (unix seconds; `default` for bots not
        listed); how many went. Safe to run on every replica at once."""

    @abstractmethod
    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        """The bot's funnel counter fields for one flow version, summed over the hour numbers `hours`."""

    async def roll_up(self) -> int:
        """Copy counters kept in a fast store to the database; how many counter groups were copied."""
        return 0

    async def move_timeline(self, limit: int = MOVE_BATCH) -> int:
        """Move timeline records from a staging area to their long-term place; how many moved."""
        return 0

    async def sweep(self, now: float) -> None:
        """Count dialogs past their session_ttl as expired (once), forget expired rows."""

    async def ping(self) -> None:
        """Raise StoreUnavailable when the storage does not answer."""

    async def close(self) -> None:
        """Free connections."""
