"""Replaying recorded dialogs on another flow: which would now go differently, where, and as a test."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from flows.engine import catch_up, step
from flows.model import Flow
from flows.dialog import Dialog, StepResult, Update
from flows.testing.updates import parse_update
from flows.testing.words import button_text


@dataclass(slots=True)
class Recorded:
    """One recorded turn: when, the update (simulator shape, or {"idle": 0} for a timer), what it did."""

    t: float
    update: dict[str, Any]
    before: str | None
    state: str | None
    transition: str | None
    replies: list[str] = field(default_factory=list)

    @property
    def is_timer(self) -> bool:
        return "idle" in self.update


@dataclass(slots=True)
class Recording:
    """A user's recorded turns, oldest first, starting where the user had no dialog."""

    user: str
    turns: list[Recorded]
    # Why a dialog with records has no turn to replay (its start was capped, its first answer masked).
    unreplayable: str | None = None


def _turn(flow: Flow, dialog: Dialog | None, rec: Recorded) -> list[StepResult]:
    """The turn on `flow` at the recorded time: timers due by then fire first, as the runtime's would."""
    results = catch_up(flow, dialog, rec.t)
    if results:
        dialog = results[-1].dialog
    if rec.is_timer:
        return results or [step(flow, dialog, Update.tick(), rec.t)]
    update, _ = parse_update(rec.update)
    return results + [step(flow, dialog, update, rec.t)]


def replay_dialog(flow: Flow, dialog: Recording) -> dict[str, Any] | None:
    """None when every turn gives the recorded replies and state; else the first turn that differs."""
    replayed: Dialog | None = None
    for index, rec in enumerate(dialog.turns):
        results = _turn(flow, replayed, rec)
        replayed = results[-1].dialog if results else replayed
        replies = [r.text for res in results for r in res.replies]
        state = replayed.state if replayed is not None else None
        fired = next((r.transition for r in reversed(results) if r.transition), None)
        differs = [k for k, same in (("replies", replies == rec.replies), ("state", state == rec.state)) if not same]
        if differs:
            pressed = rec.update.get("payload") if "event" not in rec.update else None
            return {"step": index, "update": rec.update, "before": rec.before, "differs": differs,
                    "button": button_text(flow, rec.before, pressed) if pressed is not None else None,
                    "expected": {"replies": rec.replies, "state": rec.state, "transition": rec.transition},
                    "actual": {"replies": replies, "state": state, "transition": fired},
                    "reason": " ".join(r.reason for r in results if r.reason)}
    return None


def as_case(dialog: Recording, name: str) -> dict[str, Any]:
    """The recorded dialog as a saved test: what users saw then is what the test expects."""
    steps: list[dict[str, Any]] = []
    previous = dialog.turns[0].t if dialog.turns else 0.0
    for rec in dialog.turns:
        gap = round(max(0.0, rec.t - previous), 3)
        previous = rec.t
        if rec.is_timer:
            steps.append({"update": {"idle": gap}, "expect": {"replies": rec.replies, "state": rec.state}})
            continue
        if gap >= 1:  # nothing happened in the pause, or a timer turn would have been recorded
            steps.append({"update": {"idle": gap}, "expect": {"replies": []}})
        steps.append({"update": rec.update, "expect": {"replies": rec.replies, "state": rec.state}})
    return {"name": name[:200], "steps": steps[:500]}


class Report:
    """Dialogs replayed one at a time (so a large period never sits in memory), grouped where they part."""

    def __init__(self, flow: Flow, keep: int = 200) -> None:
        self.flow = flow
        self.keep = keep
        self.count = 0
        self.groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        self.differing: list[dict[str, Any]] = []
        self.skipped: list[dict[str, str]] = []
        self.not_replayed = 0

    def add(self, dialog: Recording) -> None:
        """Replay one dialog and remember it when it differs; one that cannot be replayed is listed."""
        if not dialog.turns:
            if dialog.unreplayable:
                self.not_replayed += 1
                if len(self.skipped) < self.keep:
                    self.skipped.append({"user": dialog.user, "reason": dialog.unreplayable})
            return
        self.count += 1
        found = replay_dialog(self.flow, dialog)
        if found is None:
            return
        key = (found["before"], found["expected"]["transition"], found["actual"]["transition"])
        self.groups[key].append(dialog.user)
        if len(self.differing) < self.keep:
            self.differing.append({"user": dialog.user, "divergence": found,
                                   "test": as_case(dialog, f"replay of user {dialog.user}")})

    def result(self) -> dict[str, Any]:
        """Counts, the groups (largest first) and the first `keep` differing dialogs with their tests."""
        grouped = [{"state": k[0], "expected_transition": k[1], "actual_transition": k[2], "count": len(users),
                    "users": users[:50]} for k, users in sorted(self.groups.items(), key=lambda kv: -len(kv[1]))]
        differ = sum(len(u) for u in self.groups.values())
        return {"dialogs": self.count, "differ": differ, "same": self.count - differ, "groups": grouped,
                "differing": self.differing, "not_replayed": self.not_replayed, "skipped": self.skipped}


def replay(flow: Flow, dialogs: Iterable[Recording], keep: int = 200) -> dict[str, Any]:
    """Every dialog on `flow`: the ones that differ, grouped by where they part (state, then transitions)."""
    report = Report(flow, keep)
    for dialog in dialogs:
        report.add(dialog)
    return report.result()
