"""The one interface every dialog store implements (memory, SQL, Redis)."""
from __future__ import annotations

import itertools
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

OK, BUSY, DUPLICATE = 0, 1, 2

# Duplicate deliveries are recognised for at least a day (MAX retries for up to 8 hours).
DEDUPE_TTL = 90_000
# A lock outlives any sane turn (engine step plus a few MAX calls with their timeouts).
LOCK_MS = 30_000
TIMELINE_CAP = 200
TIMELINE_TTL = 7 * 86_400

_tokens = itertools.count(1)
_process = os.urandom(6).hex()


def new_token() -> str:
    """A lock owner token unique across processes."""
    return f"{_process}:{next(_tokens)}"


class StoreUnavailable(Exception):
    """The storage cannot be reached; the webhook answers 503 so MAX retries."""


class LockLost(Exception):
    """The lock expired and another holder may have written; nothing was saved."""


@dataclass(slots=True)
class Loaded:
    """What `begin` found: the lock status, the dialog and whether replies are queued."""

    status: int
    session: dict[str, Any] | None = None
    pending: int = 0  # replies of this user still waiting in the outbox
    retry_ms: int = 0  # BUSY: how long the current holder may still hold the lock
    handle: Any = None  # store-specific state carried from begin to commit/release


@dataclass(slots=True)
class Write:
    """Everything one turn saves at once."""

    session: dict[str, Any] | None  # None drops the dialog
    ttl: int = 1800
    dedupe: str | None = None
    timeline: dict[str, Any] | None = None
    timer_due: float | None = None
    had_timer: bool = True  # False: the dialog had no timer scheduled, so there is nothing to unschedule
    outbox: list[dict[str, Any]] = field(default_factory=list)
    outbox_at: float = 0.0  # first delivery attempt of newly queued replies
    actions: list[dict[str, Any]] = field(default_factory=list)


class DialogStore(ABC):
    """Dialogs, locks, duplicate marks, timelines, timers and the outbox behind one interface.

    A turn is `begin` (lock, duplicate check, load) then exactly one of `commit` or `release`.
    """

    @abstractmethod
    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None) -> Loaded:
        """Take the user's lock (BUSY if held), check the duplicate mark, load the dialog."""

    @abstractmethod
    async def commit(self, bot: str, user: str, token: str, write: Write, loaded: Loaded) -> None:
        """Save the turn atomically and release the lock; LockLost if the token no longer owns it."""

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
    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        """Claim dialogs whose timer is due: each is handed to one caller; unhandled, it comes back after `lease`."""

    @abstractmethod
    async def outbox_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        """Claim users whose queued replies are due, like `timers_due`."""

    @abstractmethod
    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        """The oldest queued reply of a user."""

    @abstractmethod
    async def outbox_done(self, bot: str, user: str, item_id: str) -> bool:
        """Drop the head item if it is `item_id`; True while more items wait."""

    @abstractmethod
    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float) -> None:
        """Replace the head item (its attempt count changed) and retry the user's queue at `at`."""

    @abstractmethod
    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        """Claim webhook actions whose attempt is due."""

    @abstractmethod
    async def action_done(self, item_id: str) -> None:
        """Forget a delivered (or abandoned) action."""

    @abstractmethod
    async def action_later(self, item: dict[str, Any], at: float) -> None:
        """Store the action's new attempt count and retry at `at`."""

    async def sweep(self, now: float) -> None:
        """Forget expired rows where the storage has no expiry of its own."""

    async def ping(self) -> None:
        """Raise StoreUnavailable when the storage does not answer."""

    async def close(self) -> None:
        """Free connections."""
