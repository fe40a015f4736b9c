"""In-process store for tests and the simulator: same semantics as Redis, nothing survives a restart."""
from __future__ import annotations

import copy
import time
from collections import deque
from typing import Any, AsyncIterator, Callable, Coroutine

from server.runtime.stores.listing import CountKey, DialogPage, Search
from server.runtime.stores.memory_listing import MemoryListing
from server.runtime.funnel_counts import expired_fields, split_group
from server.runtime.timeline import as_record
from server.runtime.stores.ports import DialogStore
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, TIMELINE_CAP, Claim, Loaded, LockLost, Next, Sample, TurnCommit,
    held_until,
)

Key = tuple[str, str]


class MemoryStore(DialogStore):
    """Dicts with expiry times; every method runs without awaiting, so each is atomic."""

    name = "memory"

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._dialogs: dict[Key, tuple[dict[str, Any], float]] = {}
        self._locks: dict[Key, tuple[str, float]] = {}
        self._dedupe: dict[tuple[str, str, str], float] = {}
        self._timelines: dict[Key, deque[dict[str, Any]]] = {}
        self._timers: dict[Key, float] = {}
        self._outbox: dict[Key, deque[dict[str, Any]]] = {}
        self._outq: dict[Key, float] = {}  # next look at the user's outbox (a retry, or a claim's end)
        self._owners: dict[Key, str] = {}  # who holds the user's outbox claim
        self._actions: dict[str, tuple[dict[str, Any], float]] = {}
        self._counters: dict[tuple[str, str], dict[str, int]] = {}  # (bot, group) -> field -> count
        self.listing = MemoryListing(self._running)

    def _running(self, bot: str) -> list[tuple[str, dict[str, Any]]]:
        """(user, dialog) of the bot's dialogs that have not expired."""
        found = []
        for key in list(self._dialogs):
            if key[0] == bot:
                dialog = self._dialog(key)
                if dialog is not None:
                    found.append((key[1], dialog))
        return found

    def dialog_counts(self, bot: str) -> Coroutine[Any, Any, dict[CountKey, int]]:
        return self.listing.dialog_counts(bot)

    def dialog_page(self, bot: str, search: Search) -> Coroutine[Any, Any, DialogPage]:
        return self.listing.dialog_page(bot, search)

    def _owner(self, key: Key) -> str | None:
        held = self._locks.get(key)
        if held is None or held[1] <= self.clock():
            return None
        return held[0]

    def _dialog(self, key: Key) -> dict[str, Any] | None:
        item = self._dialogs.get(key)
        if item is None or item[1] <= self.clock():
            return None  # an expired dialog stays until `sweep` or the next commit counts it
        return item[0]

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
                    optimistic: bool = False) -> Loaded:
        key, now = (bot, user), self.clock()
        if self._owner(key) is not None:
            return Loaded(BUSY, retry_ms=int((self._locks[key][1] - now) * 1000))
        if dedupe is not None and self._dedupe.get((bot, user, dedupe), 0) > now:
            return Loaded(DUPLICATE)
        self._locks[key] = (token, now + LOCK_MS / 1000)
        return Loaded(OK, copy.deepcopy(self._dialog(key)))

    async def renew(self, bot: str, user: str, token: str) -> bool:
        key = (bot, user)
        if self._owner(key) != token:
            return False
        self._locks[key] = (token, self.clock() + LOCK_MS / 1000)
        return True

    async def commit(self, bot: str, user: str, token: str, write: TurnCommit, loaded: Loaded) -> Next | None:
        key, now, asked = (bot, user), self.clock(), time.monotonic()
        if self._owner(key) != token:
            raise LockLost(f"{bot}/{user}")
        if write.counts is not None:
            pairs = write.counts.pairs
            if write.counts.prior_gone and key in self._dialogs:
                pairs = [*pairs, expired_fields(self._dialogs[key][0], now)]
            self._count(bot, pairs)
        if write.dialog is None:
            self._dialogs.pop(key, None)
            self._timers.pop(key, None)
        else:
            self._dialogs[key] = (copy.deepcopy(write.dialog), now + write.ttl)
        if write.timeline is not None:
            line = self._timelines.setdefault(key, deque(maxlen=TIMELINE_CAP))
            line.append(copy.deepcopy(as_record(write.timeline, write.dialog)))
        if write.dedupe is not None:
            self._dedupe[(bot, user, write.dedupe)] = now + DEDUPE_TTL
        if write.timer_due is None:
            self._timers.pop(key, None)
        else:
            self._timers[key] = write.timer_due
        claimed = None
        if write.outbox:
            self._outbox.setdefault(key, deque()).extend(copy.deepcopy(write.outbox))
            if key not in self._outq:
                self._outq[key], self._owners[key] = now + write.outbox_lease, token
                claimed = Next(copy.deepcopy(write.outbox[0]), more=tuple(Next(copy.deepcopy(i)) for i in write.outbox[1:]),
                               held=held_until(asked, write.outbox_lease))
        for action in write.actions:
            self._actions[action["id"]] = (copy.deepcopy(action), now)
        del self._locks[key]
        return claimed

    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        key = (bot, user)
        if self._owner(key) == token:
            del self._locks[key]

    async def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> dict[str, int]:
        key = (bot, user)
        if self._owner(key) != token:
            raise LockLost(f"{bot}/{user}")
        marks = [m for m in self._dedupe if m[:2] == key]
        actions = [i for i, (a, _) in self._actions.items() if (a.get("bot"), a.get("user")) == key]
        for mark in marks:
            del self._dedupe[mark]
        for item_id in actions:
            del self._actions[item_id]
        erased = {"dialog": int(self._dialogs.pop(key, None) is not None),
                  "timeline": len(self._timelines.pop(key, ())), "outbox": len(self._outbox.pop(key, ())),
                  "timer": int(self._timers.pop(key, None) is not None), "marks": len(marks), "actions": len(actions)}
        self._outq.pop(key, None)
        self._owners.pop(key, None)
        del self._locks[key]
        return erased

    async def forget_timelines(self, cutoffs: dict[str, float], default: float) -> int:
        gone = 0
        for key, line in list(self._timelines.items()):
            cutoff = cutoffs.get(key[0], default)
            kept = [rec for rec in line if rec["t"] >= cutoff]
            gone += len(line) - len(kept)
            if not kept:
                del self._timelines[key]
            elif len(kept) < len(line):
                self._timelines[key] = deque(kept, maxlen=TIMELINE_CAP)
        return gone

    async def dialog(self, bot: str, user: str) -> dict[str, Any] | None:
        return copy.deepcopy(self._dialog((bot, user)))

    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        return copy.deepcopy(list(self._timelines.get((bot, user), ())))

    async def bot_timelines(self, bot: str) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
        for (owner, user), line in list(self._timelines.items()):
            if owner == bot and line:
                yield user, copy.deepcopy(list(line))

    async def users(self, bot: str) -> AsyncIterator[str]:
        for key in list(self._dialogs):
            if key[0] == bot and self._dialog(key) is not None:
                yield key[1]

    async def outbox_users(self, bot: str) -> AsyncIterator[str]:
        for key, queue in list(self._outbox.items()):
            if key[0] == bot and queue:
                yield key[1]

    @staticmethod
    def _due(table: dict[Any, float], now: float, limit: int) -> list[Any]:
        return [key for _, key in sorted((at, key) for key, at in table.items() if at <= now)[:limit]]

    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        claimed = []
        for key in self._due(self._timers, now, limit):
            if self._dialog(key) is None:  # the dialog expired before its timer: nothing to fire
                del self._timers[key]
                continue
            self._timers[key] = now + lease
            claimed.append(key)
        return claimed

    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        for key in claims:
            if key in self._timers and self._timers[key] < until:
                self._timers[key] = until

    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100, *,
                           take_over: bool = True) -> list[Claim]:
        claims = []
        for key in self._due(self._outq, now, limit):
            if not take_over and self._owners.get(key) is not None:
                continue
            self._outq[key] = now + lease
            taken_over = self._owners.get(key) is not None
            self._owners[key] = owner
            claims.append(Claim(key[0], key[1], taken_over))
        return claims

    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        held = [key for key in claims if self._owners.get(key) == owner]
        for key in held:
            self._outq[key] = until
        return held

    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        queue = self._outbox.get((bot, user))
        return copy.deepcopy(queue[0]) if queue else None

    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str, lease: float = 5.0) -> Next | None:
        key, asked = (bot, user), time.monotonic()
        queue = self._outbox.get(key)
        if queue and queue[0]["id"] == item_id:  # it went out, whoever sent it
            queue.popleft()
        if self._owners.get(key) != owner:
            return None
        if not queue:
            self._outbox.pop(key, None)
            self._outq.pop(key, None)
            self._owners.pop(key, None)
            return None
        self._outq[key] = self.clock() + lease
        return Next(copy.deepcopy(queue[0]), held=held_until(asked, lease))

    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        key = (bot, user)
        if self._owners.get(key) != owner:
            return
        queue = self._outbox.get(key)
        if queue and queue[0]["id"] == item["id"]:
            queue[0] = copy.deepcopy(item)
        self._outq[key] = at
        self._owners.pop(key, None)

    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        due = sorted((at, item_id) for item_id, (_, at) in self._actions.items() if at <= now)[:limit]
        out = []
        for _, item_id in due:
            item = self._actions[item_id][0]
            self._actions[item_id] = (item, now + lease)
            out.append(copy.deepcopy(item))
        return out

    async def action_done(self, item_id: str) -> None:
        self._actions.pop(item_id, None)

    async def action_later(self, item: dict[str, Any], at: float) -> None:
        if item["id"] in self._actions:
            self._actions[item["id"]] = (copy.deepcopy(item), at)

    async def sample(self, dialogs: bool = True) -> Sample:
        heads = [queue[0].get("queued") for queue in self._outbox.values() if queue]
        found = Sample(len(self._outq), min((h for h in heads if h is not None), default=None))
        if dialogs:
            for key in list(self._dialogs):
                stored = self._dialog(key)
                if stored is not None:
                    label = (key[0], str(stored.get("version")))
                    found.dialogs[label] = found.dialogs.get(label, 0) + 1
        return found

    def _count(self, bot: str, pairs: list[tuple[str, str]]) -> None:
        for group, field in pairs:
            fields = self._counters.setdefault((bot, group), {})
            fields[field] = fields.get(field, 0) + 1

    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        totals: dict[str, int] = {}
        for (owner, group), fields in list(self._counters.items()):
            g_flow, g_version, hour = split_group(group)
            if owner == bot and (g_flow, g_version) == (flow, str(version)) and hour in hours:
                for field, value in fields.items():
                    totals[field] = totals.get(field, 0) + value
        return totals

    async def sweep(self, now: float) -> None:
        """Count dialogs past their TTL as expired and forget them."""
        for key, (stored, expires) in list(self._dialogs.items()):
            if expires <= now:
                del self._dialogs[key]
                self._timers.pop(key, None)
                self._count(key[0], [expired_fields(stored, now)])
