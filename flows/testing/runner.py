"""Running dialogs on the engine with the simulator's rules, and checking them against expectations."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flows.engine import catch_up, step
from flows.firing import new_dialog
from flows.model import Flow
from flows.dialog import Dialog, StepResult, Update
from flows.testing.cases import Case
from flows.testing.coverage import coverage, hits
from flows.testing.updates import parse_update, shown
from flows.testing.words import button_text, step_shown

# Any fixed instant will do: tests never read the wall clock, so a run is the same every time.
CLOCK_START = 1_750_000_000.0


def advance(flow: Flow, dialog: Dialog | None, update: Update, idle: float,
            now: float) -> tuple[list[StepResult], float]:
    """Apply one update at time `now`; an idle update first fires everything due, in order."""
    if update.kind != "tick":
        return [step(flow, dialog, update, now)], now
    until = now + idle
    results = catch_up(flow, dialog, until)
    if not results:
        results = [step(flow, dialog, update, until)]
    return results, until


def final_data(results: list[StepResult], dialog: Dialog | None) -> dict[str, Any]:
    """The data after a step: the dialog's, or the completed dialog's when a final state ended it."""
    if dialog is not None:
        return dialog.data
    completed = next((r.completed for r in reversed(results) if r.completed is not None), None)
    return completed.data if completed is not None else {}


def observe(results: list[StepResult], dialog: Dialog | None) -> dict[str, Any]:
    """What a step did, in the terms a test expects: reply texts, their buttons, state, data."""
    replies = [reply for r in results for reply in r.replies]
    return {
        "replies": [r.text for r in replies],
        "buttons": [[[b.get("text", "") for b in row] for row in r.buttons] for r in replies],
        "state": dialog.state if dialog is not None else None,
        "data": final_data(results, dialog),
    }


def differences(expect: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """The expectation keys whose values differ (data: only the keys the test names)."""
    out: list[str] = []
    for key in ("replies", "buttons", "state"):
        if key in expect and expect[key] != actual[key]:
            out.append(key)
    if "data" in expect:
        data = actual["data"]
        if any(data.get(k) != v for k, v in expect["data"].items()):
            out.append("data")
    return out


def shown_actual(expect: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """The actual values of the keys a test checks, data narrowed to the keys it names."""
    out: dict[str, Any] = {k: actual[k] for k in ("replies", "buttons", "state") if k in expect}
    if "data" in expect:
        out["data"] = {k: actual["data"].get(k) for k in expect["data"]}
    return out


def opening(flow: Flow, start: dict[str, Any] | None, now: float) -> Dialog | None:
    """The dialog a case starts from: none, or a dialog entered at `start.state` with `start.data`."""
    if start is None:
        return None
    if not flow.has_state(start["state"]):
        raise LookupError(f"the start state {start['state']!r} does not exist in this flow")
    return new_dialog(flow, start["state"], dict(start.get("data") or {}), now)


@dataclass(slots=True)
class CaseResult:
    """Passed, or the first step that differs with expected and actual side by side."""

    name: str
    passed: bool
    steps: int
    failure: dict[str, Any] | None = None
    error: str | None = None
    transitions: list[str] = field(default_factory=list)
    # Coverage point keys the steps touched (flows.testing.coverage.points).
    touched: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the API, the CLI's --format json)."""
        return {"name": self.name, "passed": self.passed, "steps": self.steps, "failure": self.failure,
                "error": self.error, "transitions": self.transitions}


def run_case(flow: Flow, case: Case, now: float = CLOCK_START) -> CaseResult:
    """Run every step (also past a failure, for coverage); report the first step that differs."""
    try:
        dialog = opening(flow, case.start, now)
    except LookupError as exc:
        return CaseResult(case.name, False, len(case.steps), error=f"Cannot start: {exc}.")
    failure: dict[str, Any] | None = None
    fired: list[str] = []
    touched: list[str] = []
    for index, s in enumerate(case.steps):
        update, idle = parse_update(s.update)
        before = dialog
        results, now = advance(flow, dialog, update, idle, now)
        touched.extend(hits(before, update, results))
        dialog = results[-1].dialog
        fired.extend(r.transition for r in results if r.transition)
        if failure is not None:
            continue
        actual = observe(results, dialog)
        differs = differences(s.expect, actual)
        if differs:
            where = before.state if before is not None else None
            failure = {"step": index, "update": s.update, "differs": differs,
                       "shown": step_shown(flow, where, s.update, shown(s.update)),
                       "button": button_text(flow, where, s.update.get("payload")) if "payload" in s.update else None,
                       "expected": dict(s.expect), "actual": shown_actual(s.expect, actual),
                       "reason": " ".join(r.reason for r in results if r.reason)}
    return CaseResult(case.name, failure is None, len(case.steps), failure, transitions=fired, touched=touched)


def run_cases(flow: Flow, cases: list[Case]) -> dict[str, Any]:
    """Every case on one flow: counts, per-case results and transition coverage."""
    results = [run_case(flow, c) for c in cases]
    passed = sum(1 for r in results if r.passed)
    return {"passed": passed, "failed": len(results) - passed, "total": len(results),
            "results": [r.to_dict() for r in results],
            "coverage": coverage(flow, [t for r in results for t in r.transitions],
                                 touched=[k for r in results for k in r.touched])}
