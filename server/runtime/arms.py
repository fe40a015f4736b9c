"""A running experiment as the runtime sees it: which arm (version) a user's new dialog starts on.

The arm comes from a hash of the bot, the experiment and the user only, so every replica, before and
after a restart, puts the same user on the same arm without storing anything. Its counting rides in the
turn's commit beside the funnel's: two more fields in the arm version's own counter group.
"""
from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass
from typing import Any

from flows.dialog import Dialog, StepResult
from server.runtime.funnel_counts import Counts, group

OPENED = "o"  # field suffix: a dialog opened on the arm during the experiment
REACHED = "g"  # field suffix: a dialog of the experiment reached the goal state (once per dialog)
TAG = "exp"  # the stored dialog's key naming the experiment it started in (dropped once the goal is reached)


def field(experiment: int, what: str) -> str:
    """The counter field of an experiment's openings (OPENED) or goals (REACHED)."""
    return f"a:{experiment}:{what}"


def point(bot: str, experiment: int, user: str) -> float:
    """Where the user falls in [0, 1) for this experiment: stable across processes (no salted hash())."""
    digest = hashlib.blake2b(f"{bot}\x1f{experiment}\x1f{user}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True, slots=True)
class Arms:
    """A running experiment: its flow, arm versions with integer weights, and goal state."""

    id: int
    flow_id: str
    versions: tuple[int, ...]
    weights: tuple[int, ...]
    goal: str
    edges: tuple[float, ...] = ()  # upper edges of the arms' shares of [0, 1), from the weights

    def version_for(self, bot: str, user: str) -> int:
        """The arm version a new dialog of `user` starts on."""
        return self.versions[min(bisect.bisect_right(self.edges, point(bot, self.id, user)), len(self.versions) - 1)]

    @classmethod
    def of(cls, experiment_id: int, flow_id: str, arms: list[dict[str, Any]], goal: str) -> Arms:
        """From the experiment record's fields."""
        weights = tuple(int(a["weight"]) for a in arms)
        edges = tuple(sum(weights[:i + 1]) / sum(weights) for i in range(len(weights)))
        return cls(experiment_id, flow_id, tuple(int(a["version"]) for a in arms), weights, goal, edges)

    def count(self, stored: dict[str, Any] | None, live: Dialog | None, result: StepResult,
              after: dict[str, Any] | None, counts: Counts | None, now: float) -> None:
        """Tag a dialog opened on an arm and count it; count a tagged dialog's first arrival at the goal.

        `live`: the dialog the turn found (None when none or expired); `after`: what the commit stores.
        """
        opened = result.dialog is not None and (live is None or result.outcome == "command:restart")
        tag = None if opened or stored is None else stored.get(TAG)
        s = result.dialog
        if opened and s is not None and s.flow == self.flow_id and s.version in self.versions:
            tag = self.id
            if counts is not None:
                counts.pairs.append((group(s.flow, s.version, now), field(self.id, OPENED)))
        if tag != self.id:
            return
        reached = s if s is not None else result.completed
        if reached is not None and reached.state == self.goal:
            if counts is not None:
                counts.pairs.append((group(reached.flow, reached.version, now), field(self.id, REACHED)))
            tag = None
        if after is not None and tag is not None:
            after[TAG] = tag
