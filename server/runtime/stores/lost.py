"""Noticing a Redis that lost dialogs: restarted empty, or failed over to a replica that was behind.

Two signs. The epoch record (`<prefix>:v1:epoch`, a hash made once with an id) is gone or has another id
after this process saw it: Redis restarted without its data. And a dialog's turn number (`turn`, counted
by the dispatcher on every turn it commits) is lower than the one this process last wrote: Redis went
back in time (a promoted replica that had not received the latest writes). A dialog missing where this
process wrote one that has not expired counts as lost only after the first sign (or a failover followed,
`moved`): anyone may end a dialog (a reset, an erasure on another replica), nobody may make it older.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import Any, Awaitable, Callable

from server import metrics
from server.runtime.stores.base import new_token

log = logging.getLogger("botflow.runtime.store")

REMEMBER_MAX = 50_000  # users whose last committed turn number is kept (about 150 bytes each)
RESTARTED, REWOUND = "restarted_empty", "rewound"
SHARED_FOR = 24 * 3600  # seconds the users of a Redis that came back empty are told on their next update
# A dialog missing that this process did not write has the epoch record read again if it was read longer
# ago than this, or on another connection (Redis may have restarted in between): the start of a dialog
# costs that round trip at most this often.
RECHECK = 0.5
# How long a replica that noticed the loss waits before telling unknown users apart: every replica reads
# the epoch record every second (`lifecycle.LOST_EVERY`) and notes the dialogs it wrote.
SHARE_WAIT = 2.5
# How long turns wait after this replica followed a failover: every replica follows within about a second
# (the sentinels asked every `sentinel.FOLLOW_EVERY`, the epoch record read every `LOST_EVERY`) and then
# gives the new master the turn numbers it wrote (`turn_marks`), which a turn must see to notice a rewind.
MOVE_WAIT = 2.5


class LostWatch:
    """The epoch this process saw and the turn numbers it committed; says when the store lost a dialog."""

    def __init__(self, call: Callable[..., Awaitable[Any]], key: str, users_key: str,
                 connects: Callable[[], int] = lambda: 0,
                 confirm: Callable[[], Awaitable[None]] | None = None) -> None:
        # users_key: a set of the base keys of dialogs some replica had written when Redis came back
        # empty, so a user's next update is told whichever replica it reaches
        self.call, self.key, self.users_key = call, key, users_key
        self.connects = connects  # the client's connections made so far (`resp.RespClient.connects`)
        # Raises StoreUnavailable unless the server answering is the master (the one the sentinels name):
        # asked before an epoch record found missing is taken for a Redis that restarted empty.
        self.confirm = confirm
        self.checked = 0.0  # when (monotonic) the epoch record was last read
        self.checked_on = -1  # on which of those connections
        self.sharing_until = 0.0  # (monotonic) until then the other replicas may still be noting theirs
        self.epoch: bytes | None = None
        self.moves = 0  # failovers followed: dialogs missing since may have been lost
        self.lost_at: float | None = None  # when (store clock, s) the store was last found to have lost data
        # base key -> (turn, expires at, epoch, moves) as of this process's last commit of that dialog
        self.turns: dict[str, tuple[int, float, bytes | None, int]] = {}
        self._rewound_reported: tuple[bytes | None, int] | None = None  # (epoch, moves) of the last one logged

    def remember(self, base: str, dialog: dict[str, Any] | None, expires: float) -> None:
        """A commit of this process saved `dialog` (None: dropped it)."""
        turns = self.turns
        turns.pop(base, None)
        turn = dialog.get("turn") if dialog is not None else None
        if turn.__class__ is int:
            turns[base] = (turn, expires, self.epoch, self.moves)
            if len(turns) > REMEMBER_MAX + REMEMBER_MAX // 8:
                for key in list(itertools.islice(turns, REMEMBER_MAX // 8)):
                    del turns[key]

    def forget(self, base: str) -> None:
        self.turns.pop(base, None)

    def moved(self, why: str) -> None:
        """The store may have lost writes (a failover was followed): dialogs missing since count as lost."""
        self.moves += 1
        self.sharing_until = time.monotonic() + MOVE_WAIT
        log.warning("the dialog store moved (%s): dialogs it lost will be restarted with the flow's "
                    "lost-place text", why, extra={"event": "store_moved", "outcome": why})

    async def settle(self) -> None:
        """Wait out the sharing window (`sharing_until`), if one is open."""
        wait = self.sharing_until - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        elif wait < -SHARE_WAIT:  # long past: the common path looks at a zero again
            self.sharing_until = 0.0

    async def check_epoch(self) -> bool:
        """Read the epoch record (make it when missing); whether it shows that Redis lost its data."""
        self.checked = time.monotonic()
        found = await self.call("HGET", self.key, "id")
        self.checked_on = self.connects()
        if found is not None and found == self.epoch:
            return False
        if found is None and self.epoch is not None and self.confirm is not None:
            # Only the master's word counts: a node being demoted or resynced, or asked during a
            # failover, may answer for a moment with nothing, and a new epoch made then would stand.
            await self.confirm()
            found = await self.call("HGET", self.key, "id")
        if found is None:  # a fresh Redis (first start, or restarted empty): made once, by whoever comes first
            await self.call("HSETNX", self.key, "id", new_token())
            if self.epoch is not None:
                seconds, _ = await self.call("TIME")
                await self.call("HSETNX", self.key, "lost", seconds)
            found = await self.call("HGET", self.key, "id")
        lost = self.epoch is not None and found != self.epoch
        self.epoch = found
        stamp = await self.call("HGET", self.key, "lost")
        if stamp is not None:
            self.lost_at = float(stamp)
            metrics.STORE_LOST_AT.set(self.lost_at)
        if lost:
            self.sharing_until = time.monotonic() + SHARE_WAIT
            await self._share()
            metrics.STORE_LOST.labels(RESTARTED).inc()
            log.error("Redis lost its data (its epoch record was gone): running dialogs it held are lost; "
                      "each user is told and starts again. Redis needs AOF persistence (appendfsync everysec)",
                      extra={"event": "store_lost", "outcome": RESTARTED})
        return lost

    async def _share(self) -> None:
        """The dialogs this process wrote (and that had not expired) noted in Redis for every replica."""
        bases = list(self.turns)
        for start in range(0, len(bases), 1000):
            await self.call("SADD", self.users_key, *bases[start:start + 1000])
        if bases:
            await self.call("EXPIRE", self.users_key, SHARED_FOR)

    async def unknown(self, base: str, now: float) -> tuple[str, int] | None:
        """A dialog missing that this process did not write: lost when a replica that wrote it said so."""
        # A new connection is read afresh at once: a Redis that just came back empty holds no dialog, and
        # the first update to reach it must not pass for a new user's (the read before may be 0.1 s old).
        if self.connects() != self.checked_on or time.monotonic() - self.checked > RECHECK:
            await self.check_epoch()
        wait = self.sharing_until - time.monotonic()
        if wait > 0:  # the loss was just noticed: the other replicas note what they wrote within this
            await asyncio.sleep(wait)
        if self.lost_at is None or now - self.lost_at > SHARED_FOR:
            return None
        if await self.call("SREM", self.users_key, base) != 1:
            return None
        metrics.DIALOGS_LOST.labels(RESTARTED).inc()
        return RESTARTED, 0

    async def loaded(self, base: str, dialog: dict[str, Any] | None, now: float,
                     mark: int | None = None) -> tuple[str, int] | None:
        """Why the dialog read for `base` is not the one this process (or, by its turn `mark`, any replica)
        last committed, when it was lost, and the turn number it had."""
        known = self.turns.get(base)
        if mark is not None:  # some replica committed turn `mark` when a failover came (`turn_marks`)
            stored = dialog.get("turn") if dialog is not None else None
            if dialog is None or (stored.__class__ is int and stored < mark):
                turn = max(mark, known[0]) if known is not None and known[2] == self.epoch else mark
                return await self._rewound(stored, turn, now)
        if known is None:
            return None if dialog is not None else await self.unknown(base, now)
        turn, expires, epoch, moves = known
        if dialog is None:
            if now >= expires:
                return None  # it expired
            await self.check_epoch()
            if epoch == self.epoch and moves == self.moves:
                return None  # ended by someone (a reset, an erasure elsewhere)
            await self.call("SREM", self.users_key, base)  # told here: no other replica tells it again
            metrics.DIALOGS_LOST.labels(RESTARTED).inc()
            return RESTARTED, turn
        stored = dialog.get("turn")
        if stored.__class__ is not int or stored >= turn or epoch != self.epoch:
            return None  # as written or later; or written before Redis began again, whose numbers began again
        return await self._rewound(stored, turn, now)

    async def _rewound(self, stored: int | None, turn: int, now: float) -> tuple[str, int]:
        """A dialog older (`stored`, None: gone) than turn `turn` written: counted, reported once a move."""
        metrics.DIALOGS_LOST.labels(REWOUND).inc()
        if self._rewound_reported != (self.epoch, self.moves):
            self._rewound_reported = (self.epoch, self.moves)
            metrics.STORE_LOST.labels(REWOUND).inc()
            self.lost_at = now
            metrics.STORE_LOST_AT.set(now)
            log.error("Redis went back in time: a dialog is older (turn %s) than a replica wrote it (turn %d);"
                      " a failover promoted a replica that was behind. Each such user is told and starts again",
                      "none" if stored is None else stored, turn, extra={"event": "store_lost", "outcome": REWOUND})
            try:
                await self.call("HSET", self.key, "lost", int(now))
            except Exception:  # noqa: BLE001 - only the banner's time; the turn goes on
                pass
        return REWOUND, turn
