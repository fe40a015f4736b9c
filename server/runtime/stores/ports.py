"""The store's narrow ports: each part of the runtime asks for the one it uses; every backend provides all.

Ports are Protocols, so a caller that needs two names their union as a Protocol of its own (see
`outbox.OutboxStore`); backends subclass them explicitly, which keeps the abstract methods enforced.
A method with a default says `return None`: mypy takes a Protocol's bodiless method for an abstract one.

A turn is `DialogTurns.begin` (lock, duplicate check, load) then exactly one of `commit` or `release`. The
commit queues the turn's replies (`Outbox`), its timer (`Timers`), webhook actions (`Actions`), timeline
record (`Timelines`) and funnel counts (`Counters`) at once; the other ports read or work those off later.
Every method raises only StoreUnavailable (and its LockLost) for storage failures.
"""
from __future__ import annotations

import time
from abc import abstractmethod
from typing import Any, AsyncIterator, Protocol

from server.runtime.stores.base import MOVE_BATCH, Ack, Claim, Loaded, Next, Sample, TurnCommit
from server.runtime.stores.listing import CountKey, DialogPage, Search


class Port(Protocol):
    """What every port of one backend shares: the `store` label of its metrics."""

    name: str = "store"


class DialogTurns(Port, Protocol):
    """Dialogs and the turns that change them: lock, load, save, release; read and erase one user."""

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
    async def commit(self, bot: str, user: str, token: str, write: TurnCommit, loaded: Loaded) -> Next | None:
        """Save the turn atomically and release the lock; LockLost if the token no longer owns it, Changed
        if the turn read the dialog unlocked and it changed since (or the delivery is a duplicate).

        A Next (the write's first send) when the write queued sends and nobody was working on the user's
        outbox: the caller now holds that claim (owner `token`, `write.outbox_lease`) and sends at once.
        """

    @abstractmethod
    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        """Release the lock without writing, only if the token still owns it."""

    @abstractmethod
    async def dialog(self, bot: str, user: str) -> dict[str, Any] | None:
        """The dialog as stored, without locking (inspection)."""

    @abstractmethod
    def users(self, bot: str) -> AsyncIterator[str]:
        """Users of a bot that have a dialog stored (publish reset/migrate walk them)."""

    @abstractmethod
    async def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> dict[str, int]:
        """Forget the user (lock held by `token`): dialog, timer, timeline, queued sends, webhook actions and
        duplicate marks kept by user; releases the lock. How many of each went; LockLost if not held."""


class Outbox(Port, Protocol):
    """Per-user send queues the commits fill, claimed by one sender at a time and emptied in order."""

    # True when `outbox_acks` drops many users' sent items in one call, so senders batch their acks.
    batches_acks: bool = False

    @abstractmethod
    def outbox_users(self, bot: str) -> AsyncIterator[str]:
        """Users of a bot with sends queued, whether or not their dialog is still running."""

    @abstractmethod
    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100, *,
                           take_over: bool = True) -> list[Claim]:
        """Claim users whose queued sends are due (a retry, or a claim that lapsed) for `owner`; with
        `take_over` False only retries, no lapsed claim (the caller just got the store back)."""

    @abstractmethod
    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        """Extend `owner`'s claims to `until`; returns those still held."""

    @abstractmethod
    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        """The oldest queued send of a user."""

    @abstractmethod
    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str, lease: float = 5.0) -> Next | None:
        """Drop the head item if it is `item_id` (whoever says it went out: a former claimer's late word
        too, so the new one does not send it again); the next send while more wait and `owner` holds the
        claim, which then lasts `lease` seconds more (`Next.held`): the proof its next call needs.

        With nothing left the claim ends; a commit that queues later replies makes its turn the new claimer.
        """

    async def outbox_acks(self, acks: list[Ack], lease: float = 5.0) -> list[tuple[str, str, Next]]:
        """`outbox_done` for many users at once; (bot, user, next send) for those whose queue goes on."""
        more = []
        for ack in acks:
            found = None
            for item_id in ack.ids:
                found = await self.outbox_done(ack.bot, ack.user, item_id, ack.owner, lease)
            if found is not None:
                more.append((ack.bot, ack.user, found))
        return more

    @abstractmethod
    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        """Replace the head item (its attempt count changed), end the claim and retry the user's queue at `at`."""


class Timers(Port, Protocol):
    """Dialogs' timers the commits set, claimed when due; the sweep of dialogs past their TTL."""

    @abstractmethod
    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        """Claim dialogs whose timer is due until now + lease; entries whose dialog is gone are dropped."""

    @abstractmethod
    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        """Extend claimed timers still being fired to `until` (never earlier than a newly set due time)."""

    async def sweep(self, now: float) -> None:
        """Count dialogs past their session_ttl as expired (once), forget expired rows."""
        return None


class Actions(Port, Protocol):
    """Webhook actions the commits queue, claimed when their attempt is due."""

    @abstractmethod
    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        """Claim webhook actions whose attempt is due."""

    @abstractmethod
    async def action_done(self, item_id: str) -> None:
        """Forget a delivered (or abandoned) action."""

    @abstractmethod
    async def action_later(self, item: dict[str, Any], at: float) -> None:
        """Store the action's new attempt count and retry at `at`."""


class Timelines(Port, Protocol):
    """Each user's timeline records, which the commits append."""

    @abstractmethod
    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        """The user's timeline records, oldest first."""

    @abstractmethod
    def bot_timelines(self, bot: str) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
        """Each user of the bot with timeline records (running dialogs or ended ones) and those records,
        oldest first: one pass over the store, however many users (replay reads every dialog this way)."""

    @abstractmethod
    async def forget_timelines(self, cutoffs: dict[str, float], default: float) -> int:
        """Delete timeline records older than their bot's cutoff (unix seconds; `default` for bots not
        listed); how many went. Safe to run on every replica at once."""

    async def move_timeline(self, limit: int = MOVE_BATCH) -> int:
        """Move timeline records from a staging area to their long-term place; how many moved."""
        return 0


class Counters(Port, Protocol):
    """The funnel counters the commits (and the expiry of dialogs) increment, by bot, flow version and hour."""

    @abstractmethod
    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        """The bot's funnel counter fields for one flow version, summed over the hour numbers `hours`."""

    async def roll_up(self) -> int:
        """Copy counters kept in a fast store to the database; how many counter groups were copied."""
        return 0


class Listing(Port, Protocol):
    """The running dialogs of a bot, counted and paged through."""

    @abstractmethod
    async def dialog_counts(self, bot: str) -> dict[CountKey, int]:
        """Running dialogs of a bot per (flow, version, state); one pass over the bot's dialogs."""

    @abstractmethod
    async def dialog_page(self, bot: str, search: Search) -> DialogPage:
        """One page of a bot's running dialogs matching `search`; BadSearch for a cursor never handed out.

        A page holds at most `search.limit` dialogs and may hold fewer while `next` is set (Redis bounds
        the keys one call looks through).
        """


class Health(Port, Protocol):
    """Whether the storage answers, holds its writes and its data; its clock; gauges; closing."""

    min_replicas: int = 0  # replicas `replicated` waits for after every commit

    async def ping(self) -> None:
        """Raise StoreUnavailable when the storage does not answer."""
        return None

    async def replicated(self) -> None:
        """Return once this process's writes so far are held by the replicas the store must wait for
        (none: at once); raise NotReplicated when they do not confirm in time."""
        return None

    async def server_time(self) -> float:
        """The storage's own clock (Unix seconds): every replica's times are measured against it
        (`store_clock.StoreClock`). A store inside this process has this process's clock."""
        return time.time()

    async def check_lost(self) -> None:
        """Look whether the storage lost its data since last looked (`stores.lost`; only Redis can)."""
        return None

    def lost_at(self) -> float | None:
        """When (the store's clock) the storage was last found to have lost dialogs; None never."""
        return None

    @abstractmethod
    async def sample(self, dialogs: bool = True) -> Sample:
        """Gauges for /metrics; `dialogs=False` skips the per-version count (a scan on Redis)."""

    async def close(self) -> None:
        """Free connections."""
        return None


class DialogStore(DialogTurns, Outbox, Timers, Actions, Timelines, Counters, Listing, Health, Protocol):
    """A whole backend: every port over one storage (what the app builds and hands out port by port)."""
