"""The funnel of one flow version from its counter fields: per state and per transition, as JSON or CSV."""
from __future__ import annotations

from typing import Any

from flows.model import Flow
from server.csv_cells import to_csv_text
from server.runtime.funnel_counts import ENDINGS, median_seconds


def report(flow: Flow | None, version: int, fields: dict[str, int]) -> dict[str, Any]:
    """{"version", "states": [...], "transitions": [...]} from counter fields (funnel_counts names)."""
    states: dict[str, dict[str, Any]] = {}
    transitions: dict[str, dict[str, Any]] = {}
    durations: dict[str, dict[int, int]] = {}

    def state(sid: str) -> dict[str, Any]:
        if sid not in states:
            found = flow.state(sid) if flow is not None and flow.has_state(sid) else None
            states[sid] = {"id": sid, "title": found.title if found else "", "final": bool(found and found.final),
                           "known": found is not None, "entered": 0, "left": {},
                           "ended": {name: 0 for name in ENDINGS.values()}, "median_seconds": None}
        return states[sid]

    for transition in flow.transitions if flow is not None else ():
        transitions[transition.id] = {"id": transition.id, "source": transition.source,
                                      "target": transition.target, "fired": 0}
    for st in flow.states if flow is not None else ():
        state(st.id)
    def spent(sid: str | None, index: str, value: int) -> None:
        if sid is not None and index.isdigit():  # "s": a self-loop, no time in state ended
            into = durations.setdefault(sid, {})
            into[int(index)] = into.get(int(index), 0) + value

    for name, value in fields.items():
        kind, _, rest = name.partition(":")
        if kind == "e":
            state(rest)["entered"] += value
        elif kind == "x":
            state(rest)["ended"]["expired"] += value
        elif kind == "f":
            tid, _, index = rest.rpartition(":")
            tr = transitions.setdefault(tid, {"id": tid, "source": None, "target": None, "fired": 0})
            tr["fired"] += value
            spent(tr["source"], index, value)
        elif kind in ("c", "r", "b"):
            sid, _, index = rest.rpartition(":")
            state(sid)["ended"][ENDINGS[kind]] += value
            spent(sid, index, value)
    for tr in transitions.values():
        if tr["source"] is not None and tr["fired"]:
            state(tr["source"])["left"][tr["id"]] = tr["fired"]
            if tr["target"] != tr["source"]:  # a self-loop fires without entering anew
                target = state(tr["target"])
                target["entered"] += tr["fired"]
                if target["final"]:
                    target["ended"]["completed"] += tr["fired"]
    for sid, buckets in durations.items():
        state(sid)["median_seconds"] = median_seconds(buckets)
    return {"version": version, "start": flow.start if flow is not None else None,
            "states": list(states.values()), "transitions": list(transitions.values())}


CSV_HEADER = ["version", "kind", "id", "source", "target", "entered", "fired", "left", "cancel", "expired",
              "completed", "restart", "back", "median_seconds"]


def to_csv(reports: list[dict[str, Any]]) -> str:
    """One row per state and per transition of every report (a comparison has two)."""
    rows: list[list[Any]] = [CSV_HEADER]
    for rep in reports:
        for st in rep["states"]:
            ended = st["ended"]
            rows.append([rep["version"], "state", st["id"], "", "", st["entered"], "", sum(st["left"].values()),
                         ended["cancel"], ended["expired"], ended["completed"], ended["restart"], ended["back"],
                         "" if st["median_seconds"] is None else st["median_seconds"]])
        for tr in rep["transitions"]:
            rows.append([rep["version"], "transition", tr["id"], tr["source"] or "", tr["target"] or "", "",
                         tr["fired"], "", "", "", "", "", "", ""])
    return to_csv_text(rows)
