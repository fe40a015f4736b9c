"""Trouble the fake MAX can be told to make: refusals, holds, outages, a rate limit and cut connections."""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]
# Where a cut connection breaks: "before" the call takes effect (nothing sent), or "after" it did
# (the message reached the user, the caller never hears so).
DROP_POINTS = ("before", "after")


@dataclass(slots=True)
class Plan:
    """What the fake does with one call, decided when it arrives."""

    hold: float = 0.0  # seconds to wait before answering
    status: int | None = None  # refuse with this status and a MAX error body
    retry_after: float | None = None  # the Retry-After header of a refusal
    drop: str | None = None  # cut the connection "before" or "after" the call takes effect


class Faults:
    """One-shot and standing faults; the app holds its lock around every method."""

    def __init__(self) -> None:
        self.once: list[Json] = []
        self.down = False
        self.down_until = 0.0
        self.down_drop = False  # while down, cut connections instead of answering 503
        self.slow: dict[str | None, float] = {}  # path (None: every path) -> seconds every call is held
        self.rate: float | None = None  # accepted calls per second per bot, beyond which 429
        self.rate_retry_after = 1.0
        self._recent: dict[str, deque[float]] = {}

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def add(self, kind: str, n: int, path: str | None, **fields: Any) -> None:
        """Queue a one-shot fault for the next `n` calls (to `path`, if given)."""
        if n < 1:
            raise ValueError("n must be at least 1")
        self.once.append({"kind": kind, "n": n, "path": path, **fields})

    def set_down(self, down: bool, seconds: float | None = None, drop: bool = False) -> None:
        self.down = down and seconds is None
        self.down_until = time.monotonic() + seconds if down and seconds is not None else 0.0
        self.down_drop = drop and down

    def is_down(self) -> bool:
        return self.down or time.monotonic() < self.down_until

    def _take(self, kind: str, path: str) -> Json | None:
        for fault in self.once:
            if fault["kind"] == kind and fault["path"] in (None, path):
                fault["n"] -= 1
                if fault["n"] <= 0:
                    self.once.remove(fault)
                return fault
        return None

    def _over_rate(self, bot: str | None, now: float) -> bool:
        """Count this call against its bot's last second; True when it is one too many."""
        if self.rate is None or bot is None:
            return False
        recent = self._recent.setdefault(bot, deque())
        while recent and recent[0] <= now - 1.0:
            recent.popleft()
        if len(recent) >= self.rate:
            return True
        recent.append(now)
        return False

    def quiet(self) -> bool:
        """No trouble is set up: every authorised call goes through at once (the common case, decided fast)."""
        return not (self.once or self.slow or self.down or self.down_until or self.rate is not None)

    def plan(self, path: str, bot: str | None, authorised: bool) -> Plan:
        """The fate of a call arriving now: holds first, then outage, token, one-shot refusals, rate."""
        plan = Plan()
        if self.quiet():
            if not authorised:
                plan.status = 401
            return plan
        delay = self._take("delay", path)
        plan.hold = delay["seconds"] if delay is not None else self.slow.get(path, self.slow.get(None, 0.0))
        if self.is_down():
            if self.down_drop:
                plan.drop = "before"
            else:
                plan.status = 503
            return plan
        if not authorised:
            plan.status = 401
            return plan
        fail = self._take("fail", path)
        if fail is not None:
            plan.status, plan.retry_after = fail["status"], fail.get("retry_after")
            return plan
        if self._over_rate(bot, time.monotonic()):
            plan.status, plan.retry_after = 429, self.rate_retry_after
            return plan
        drop = self._take("drop", path)
        if drop is not None:
            plan.drop = drop["when"]
        return plan
