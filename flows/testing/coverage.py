"""Transition coverage: which transitions a set of dialogs fired, and which none did."""
from __future__ import annotations

from typing import Any, Iterable

from flows.model import Flow


def coverage(flow: Flow, fired: Iterable[str], reasons: dict[str, str] | None = None) -> dict[str, Any]:
    """Covered and uncovered transition ids and the share covered (100 for a flow without transitions)."""
    seen = set(fired)
    ids = [tr.id for tr in flow.transitions]
    covered = [t for t in ids if t in seen]
    reasons = reasons or {}
    uncovered = [{"transition": t, "reason": reasons.get(t)} for t in ids if t not in seen]
    percent = round(100.0 * len(covered) / len(ids), 1) if ids else 100.0
    return {"total": len(ids), "covered": covered, "uncovered": uncovered, "percent": percent}
