"""What the store ports pass around (Loaded, TurnCommit, Next, Claim...), their errors and shared limits."""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from server.runtime.funnel_counts import Counts

OK, BUSY, DUPLICATE = 0, 1, 2

# Duplicate deliveries are recognised for at least a day (messengers retry for hours: MAX for up to 8).
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
    """The storage cannot be reached or refused the call; the webhook answers 503 so the messenger retries."""


class NotReplicated(StoreUnavailable):
    """The write was saved on the primary, but fewer replicas than required confirmed it in time."""


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
    dialog: dict[str, Any] | None = None
    retry_ms: int = 0  # BUSY: how long the current holder may still hold the lock
    handle: Any = None  # store-specific state carried from begin to commit/release
    # False: read from this process's own last write without taking the lock (`begin(optimistic=True)`);
    # the commit then saves only if nothing changed since, else raises Changed.
    locked: bool = True
    # The store lost this user's running dialog (`stores.lost`): (why, the turn number it had). The turn
    # starts the dialog again, telling the user first.
    lost: tuple[str, int] | None = None
    # The turn high-water mark read with the dialog (Redis, after a failover: `stores.lost`), None nearly always.
    mark: int | None = None


@dataclass(slots=True)
class TurnCommit:
    """Everything one turn saves at once, replies and actions included (they are sent after the commit)."""

    dialog: dict[str, Any] | None  # None drops the dialog
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
    reserved for it comes (None when the store keeps no rate, and the sender asks its limiter);
    `held`: until when (time.monotonic()) the claim is surely still the caller's (0: unknown), counted
    from before the request that proved it, so a pause on the way back cannot stretch it."""

    item: dict[str, Any]
    slot_at: float | None = None
    more: tuple[Next, ...] = ()  # from a commit: the write's other sends, in order, after this one
    held: float = 0.0


# A claim's end is stored at most this much early (Redis keeps whole seconds in the queue's scores), and a
# sender's own view of it is cut by FENCE_MARGIN more: the time its check and its call may lie apart.
LEASE_ROUNDING = 1.0
FENCE_MARGIN = 0.25


def held_until(asked: float, lease: float) -> float:
    """Until when (time.monotonic()) a claim stays its holder's, proved by a request made at `asked`
    (time.monotonic(), taken before the request went out) that set it to last `lease` seconds."""
    return asked + lease - LEASE_ROUNDING - FENCE_MARGIN


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
