"""Coverage: which transitions a set of dialogs fired, and which of the flow's other points (an input
state's invalid input, the reminder, each command, each button) they touched, and which none did."""
from __future__ import annotations

from typing import Any, Iterable

from flows.model import Flow
from flows.dialog import Dialog, StepResult, Update

# Words for a transition by its trigger: a `max_attempts` → `invalid` and a timeout are named as such.
_TRANSITION_KIND = {"invalid": "attempts", "timeout": "timeout"}


def _title(flow: Flow, state_id: str) -> str:
    st = flow.state(state_id)
    return (st.title or st.id) if st is not None else state_id


def points(flow: Flow) -> list[dict[str, Any]]:
    """Every point a test can cover, each {"key", "kind", ...what names it to a reader}, in flow order."""
    out: list[dict[str, Any]] = []
    for tr in flow.transitions:
        out.append({"key": f"transition:{tr.id}", "kind": _TRANSITION_KIND.get(tr.on, "transition"),
                    "transition": tr.id, "state": tr.source, "state_title": _title(flow, tr.source),
                    "target": tr.target, "target_title": _title(flow, tr.target)})
    for st in flow.states:
        if st.input is not None and not st.final:
            out.append({"key": f"invalid:{st.id}", "kind": "invalid", "state": st.id,
                        "state_title": st.title or st.id})
        if st.final:
            continue
        seen: set[str] = set()
        for message in st.say:
            for row in message.buttons:
                for b in row:
                    if b.payload is None or b.payload in seen:
                        continue
                    seen.add(b.payload)
                    out.append({"key": f"button:{st.id}:{b.payload}", "kind": "button", "state": st.id,
                                "state_title": st.title or st.id, "payload": b.payload, "text": b.text})
    if flow.settings.reminder is not None:
        out.append({"key": "reminder", "kind": "reminder"})
    for name, cmd in flow.commands.items():
        if cmd is not None and cmd.match:
            out.append({"key": f"command:{name}", "kind": "command", "command": name, "match": cmd.match[0]})
    return out


def hits(dialog: Dialog | None, update: Update, results: list[StepResult]) -> list[str]:
    """The point keys one update touched (see `points`); keys of points a flow lacks are harmless."""
    out: list[str] = []
    state = dialog.state if dialog is not None else None
    if update.kind == "button" and state is not None and update.payload is not None:
        out.append(f"button:{state}:{update.payload}")
    for r in results:
        if r.transition:
            out.append(f"transition:{r.transition}")
        if r.outcome == "input_invalid" and state is not None:
            out.append(f"invalid:{state}")
        elif r.outcome == "reminder":
            out.append("reminder")
        elif r.outcome.startswith("command:"):
            out.append(r.outcome)
        state = r.dialog.state if r.dialog is not None else None
    return out


def summary(flow: Flow, touched: Iterable[str], reasons: dict[str, str] | None = None) -> dict[str, Any]:
    """All points: how many, how many covered, the share, and the ones not covered with why (if known)."""
    seen = set(touched)
    reasons = reasons or {}
    every = points(flow)
    covered = sum(1 for p in every if p["key"] in seen)
    missing = [{**p, "reason": reasons.get(p["key"])} for p in every if p["key"] not in seen]
    percent = round(100.0 * covered / len(every), 1) if every else 100.0
    return {"total": len(every), "covered": covered, "percent": percent, "missing": missing}


def coverage(flow: Flow, fired: Iterable[str], reasons: dict[str, str] | None = None,
             touched: Iterable[str] | None = None) -> dict[str, Any]:
    """Covered and uncovered transition ids and the share covered (100 for a flow without transitions),
    with `points`: the same over every point (see `summary`)."""
    seen = set(fired)
    ids = [tr.id for tr in flow.transitions]
    covered = [t for t in ids if t in seen]
    reasons = reasons or {}
    uncovered = [{"transition": t, "reason": reasons.get(t)} for t in ids if t not in seen]
    percent = round(100.0 * len(covered) / len(ids), 1) if ids else 100.0
    keys = set(touched) if touched is not None else set()
    keys.update(f"transition:{t}" for t in seen)
    point_reasons = {f"transition:{k}": v for k, v in reasons.items()}
    return {"total": len(ids), "covered": covered, "uncovered": uncovered, "percent": percent,
            "points": summary(flow, keys, point_reasons)}
