"""A whole store made of one part per port: each port's calls go to the part that provides it.

The forwarders are plain functions handing back the part's coroutine (or async iterator), so a call
through the whole store costs one function call more, never another coroutine; the calls every turn makes
are the part's own bound methods, not even that.
"""
from __future__ import annotations

from typing import Any, AsyncIterator, Coroutine

from server.runtime.stores.base import MOVE_BATCH, Ack, Claim, Loaded, Next, Sample, TurnCommit
from server.runtime.stores.listing import CountKey, DialogPage, Search
from server.runtime.stores.ports import (
    Actions, Counters, DialogStore, DialogTurns, Health, Listing, Outbox, Timelines, Timers,
)

Co = Coroutine[Any, Any, Any]


class ComposedStore(DialogStore):
    """Every port, each provided by its own part (`turns`, `outbox`, `timers`, ...) over one storage."""

    def __init__(self, *, turns: DialogTurns, outbox: Outbox, timers: Timers, actions: Actions,
                 timelines: Timelines, counters: Counters, listing: Listing, health: Health) -> None:
        self.turns, self.outbox, self.timers, self.actions = turns, outbox, timers, actions
        self.timelines, self.counters, self.listing, self.health = timelines, counters, listing, health
        self.name = health.name
        self.batches_acks = outbox.batches_acks
        self.min_replicas = health.min_replicas
        # Every turn's calls: the part's own methods (the forwarders below stay for the type and the reader).
        self.begin = turns.begin  # type: ignore[method-assign]
        self.commit = turns.commit  # type: ignore[method-assign]
        self.release = turns.release  # type: ignore[method-assign]
        self.outbox_done = outbox.outbox_done  # type: ignore[method-assign]
        self.outbox_acks = outbox.outbox_acks  # type: ignore[method-assign]

    # DialogTurns
    def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
              optimistic: bool = False) -> Coroutine[Any, Any, Loaded]:
        return self.turns.begin(bot, user, token, dedupe, optimistic=optimistic)

    def renew(self, bot: str, user: str, token: str) -> Coroutine[Any, Any, bool]:
        return self.turns.renew(bot, user, token)

    def commit(self, bot: str, user: str, token: str, write: TurnCommit, loaded: Loaded) -> Coroutine[Any, Any, Next | None]:
        return self.turns.commit(bot, user, token, write, loaded)

    def release(self, bot: str, user: str, token: str, loaded: Loaded) -> Co:
        return self.turns.release(bot, user, token, loaded)

    def dialog(self, bot: str, user: str) -> Coroutine[Any, Any, dict[str, Any] | None]:
        return self.turns.dialog(bot, user)

    def users(self, bot: str) -> AsyncIterator[str]:
        return self.turns.users(bot)

    def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> Coroutine[Any, Any, dict[str, int]]:
        return self.turns.erase(bot, user, token, loaded)

    # Outbox
    def outbox_users(self, bot: str) -> AsyncIterator[str]:
        return self.outbox.outbox_users(bot)

    def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100, *,
                     take_over: bool = True) -> Coroutine[Any, Any, list[Claim]]:
        return self.outbox.outbox_claim(now, lease, owner, limit, take_over=take_over)

    def outbox_hold(self, claims: list[tuple[str, str]], owner: str,
                    until: float) -> Coroutine[Any, Any, list[tuple[str, str]]]:
        return self.outbox.outbox_hold(claims, owner, until)

    def outbox_head(self, bot: str, user: str) -> Coroutine[Any, Any, dict[str, Any] | None]:
        return self.outbox.outbox_head(bot, user)

    def outbox_done(self, bot: str, user: str, item_id: str, owner: str,
                    lease: float = 5.0) -> Coroutine[Any, Any, Next | None]:
        return self.outbox.outbox_done(bot, user, item_id, owner, lease)

    def outbox_acks(self, acks: list[Ack], lease: float = 5.0) -> Coroutine[Any, Any, list[tuple[str, str, Next]]]:
        return self.outbox.outbox_acks(acks, lease)

    def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> Co:
        return self.outbox.outbox_later(bot, user, item, at, owner)

    # Timers
    def timers_due(self, now: float, lease: float, limit: int = 100) -> Coroutine[Any, Any, list[tuple[str, str]]]:
        return self.timers.timers_due(now, lease, limit)

    def timers_hold(self, claims: list[tuple[str, str]], until: float) -> Co:
        return self.timers.timers_hold(claims, until)

    def sweep(self, now: float) -> Co:
        return self.timers.sweep(now)

    # Actions
    def actions_due(self, now: float, lease: float, limit: int = 100) -> Coroutine[Any, Any, list[dict[str, Any]]]:
        return self.actions.actions_due(now, lease, limit)

    def action_done(self, item_id: str) -> Co:
        return self.actions.action_done(item_id)

    def action_later(self, item: dict[str, Any], at: float) -> Co:
        return self.actions.action_later(item, at)

    # Timelines
    def timeline(self, bot: str, user: str) -> Coroutine[Any, Any, list[dict[str, Any]]]:
        return self.timelines.timeline(bot, user)

    def bot_timelines(self, bot: str) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
        return self.timelines.bot_timelines(bot)

    def forget_timelines(self, cutoffs: dict[str, float], default: float) -> Coroutine[Any, Any, int]:
        return self.timelines.forget_timelines(cutoffs, default)

    def move_timeline(self, limit: int = MOVE_BATCH) -> Coroutine[Any, Any, int]:
        return self.timelines.move_timeline(limit)

    # Counters
    def funnel(self, bot: str, flow: str, version: str, hours: range) -> Coroutine[Any, Any, dict[str, int]]:
        return self.counters.funnel(bot, flow, version, hours)

    def roll_up(self) -> Coroutine[Any, Any, int]:
        return self.counters.roll_up()

    # Listing
    def dialog_counts(self, bot: str) -> Coroutine[Any, Any, dict[CountKey, int]]:
        return self.listing.dialog_counts(bot)

    def dialog_page(self, bot: str, search: Search) -> Coroutine[Any, Any, DialogPage]:
        return self.listing.dialog_page(bot, search)

    # Health
    def ping(self) -> Co:
        return self.health.ping()

    def replicated(self) -> Co:
        return self.health.replicated()

    def server_time(self) -> Coroutine[Any, Any, float]:
        return self.health.server_time()

    def check_lost(self) -> Co:
        return self.health.check_lost()

    def lost_at(self) -> float | None:
        return self.health.lost_at()

    def sample(self, dialogs: bool = True) -> Coroutine[Any, Any, Sample]:
        return self.health.sample(dialogs)

    def close(self) -> Co:
        return self.health.close()
