"""One clock for every replica: the dialog store's. Leases, claim ends, timer due times, reminders and
session expiry are all compared on the store, so a replica whose own clock is off must not write times
read from that clock; it writes its own clock corrected by the offset it measures to the store's."""
from __future__ import annotations

import logging
import time
from typing import Callable

from server import metrics
from server.runtime.loop import repeat
from server.runtime.stores.ports import Health

log = logging.getLogger("botflow.runtime.clock")

MEASURE_EVERY = 5.0  # seconds between measurements (a clock stepped by NTP is followed within this)
WARN_ABOVE = 1.0  # an offset larger than this is logged: the host's time service needs looking at
# A measurement whose round trip took longer than this says little (the answer's moment is that uncertain).
TRUST_WITHIN = 0.25


class StoreClock:
    """`now()`: this host's wall clock plus its measured offset to the store's (the store's time, as
    nearly as half a round trip can tell). Callable, so it goes where a `clock` is injected."""

    def __init__(self, store: Health, wall: Callable[[], float] = time.time) -> None:
        self.store = store
        self.wall = wall  # this host's clock
        self.offset = 0.0
        self._warned: float | None = None  # the offset last warned about

    def __call__(self) -> float:
        return self.wall() + self.offset

    now = __call__

    async def measure(self) -> float:
        """Ask the store for its time once; keep the offset when the round trip was quick enough."""
        sent, before = time.monotonic(), self.wall()
        theirs = await self.store.server_time()
        took = time.monotonic() - sent
        if took <= TRUST_WITHIN or self.offset == 0.0:
            self.offset = theirs - (before + took / 2)
            metrics.CLOCK_OFFSET_SECONDS.set(self.offset)
            self._report()
        return self.offset

    def _report(self) -> None:
        if abs(self.offset) > WARN_ABOVE:
            if self._warned is None or abs(self.offset - self._warned) > WARN_ABOVE:
                self._warned = self.offset
                log.warning("this host's clock is %+.3f s off the dialog store's; every time this replica "
                            "writes is corrected by it, but the host's time service needs looking at",
                            -self.offset, extra={"event": "clock_offset", "outcome": "skewed",
                                                 "duration_ms": round(self.offset * 1000)})
        elif self._warned is not None:
            self._warned = None
            log.warning("this host's clock agrees with the dialog store's again (%+.3f s)", -self.offset,
                        extra={"event": "clock_offset", "outcome": "ok"})

    async def run(self) -> None:
        """Measure forever."""
        await repeat("store clock", self.measure, MEASURE_EVERY, log)
