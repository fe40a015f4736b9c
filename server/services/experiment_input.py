"""Checking an experiment's start request: every problem found is one detail with a path and a sentence."""
from __future__ import annotations

import json
from typing import Any, TypeGuard

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import FlowRow, VersionRow
from server.errors import NotFound, Unprocessable
from server.services.common import is_slug

MIN_ARMS, MAX_ARMS = 2, 4
MAX_WEIGHT = 1_000_000
MAX_MIN_DIALOGS = 10_000_000
MAX_STATE = 200  # the column's width; longer is no state id anyway


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _problem(details: list[dict[str, str]], path: str, message: str) -> None:
    details.append({"path": path, "message": message})


def _shape(body: dict[str, Any], details: list[dict[str, str]]) -> None:
    """Fields, types and ranges that need no database."""
    for name in body:
        if name not in ("flow", "arms", "goal", "auto_promote"):
            _problem(details, name, "unknown field; expected flow, arms, goal, auto_promote")
    if not is_slug(body.get("flow")):
        _problem(details, "flow", "name the flow whose versions are compared by its id, as a string")
    arms = body.get("arms")
    if not isinstance(arms, list) or not MIN_ARMS <= len(arms) <= MAX_ARMS:
        _problem(details, "arms", f"give {MIN_ARMS} to {MAX_ARMS} arms, each {{\"version\": n, \"weight\": w}}")
    else:
        seen: set[int] = set()
        for i, arm in enumerate(arms):
            if not isinstance(arm, dict) or set(arm) - {"version", "weight"}:
                _problem(details, f"arms[{i}]", "an arm is {\"version\": n, \"weight\": w} and nothing else")
                continue
            version, weight = arm.get("version"), arm.get("weight")
            if not _is_int(version) or not 1 <= version <= 2**31 - 1:
                _problem(details, f"arms[{i}].version", "a version number from 1")
            elif version in seen:
                _problem(details, f"arms[{i}].version", f"version {version} is already another arm; "
                                                         "each arm is a different version")
            else:
                seen.add(version)
            if not _is_int(weight) or not 1 <= weight <= MAX_WEIGHT:
                _problem(details, f"arms[{i}].weight", f"a whole number from 1 to {MAX_WEIGHT} "
                                                        "(the arm's share is its weight over their sum)")
    goal = body.get("goal")
    if not isinstance(goal, dict) or set(goal) != {"state"} or not isinstance(goal.get("state"), str) \
            or not goal["state"]:
        _problem(details, "goal", "give the goal as {\"state\": \"<state id>\"}")
    elif len(goal["state"]) > MAX_STATE:
        _problem(details, "goal.state", f"a state id has at most {MAX_STATE} characters")
    auto = body.get("auto_promote")
    if auto is not None:
        if not isinstance(auto, dict) or set(auto) != {"confidence", "min_dialogs"}:
            _problem(details, "auto_promote", "give {\"confidence\": 0.95, \"min_dialogs\": 200}, or null to "
                                              "promote by hand")
        else:
            confidence, least = auto["confidence"], auto["min_dialogs"]
            if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.5 <= confidence < 1:
                _problem(details, "auto_promote.confidence", "a probability from 0.5 up to (not including) 1, "
                                                             "such as 0.95")
            if not _is_int(least) or not 1 <= least <= MAX_MIN_DIALOGS:
                _problem(details, "auto_promote.min_dialogs", f"a whole number of dialogs from 1 to {MAX_MIN_DIALOGS}")


async def check(session: AsyncSession, body: Any) -> dict[str, Any]:
    """The request, checked against the flow's versions; 404 for an unknown flow, 422 listing every problem."""
    if not isinstance(body, dict):
        raise Unprocessable("Send a JSON object: {\"flow\", \"arms\": [{\"version\", \"weight\"}, ...], "
                            "\"goal\": {\"state\"}, \"auto_promote\": {...} | null}.")
    details: list[dict[str, str]] = []
    _shape(body, details)
    if not details:
        flow_id = body["flow"]
        if await session.get(FlowRow, flow_id) is None:
            raise NotFound(f"There is no flow '{flow_id}'; GET /api/flows lists the flows.", {"flow": flow_id})
        goal = body["goal"]["state"]
        for i, arm in enumerate(body["arms"]):
            text = await session.scalar(select(VersionRow.document).where(
                VersionRow.flow_id == flow_id, VersionRow.number == arm["version"]))
            if text is None:
                _problem(details, f"arms[{i}].version", f"flow '{flow_id}' has no version {arm['version']}; "
                                                        "freeze one first")
            elif goal not in {s.get("id") for s in json.loads(text).get("states", []) if isinstance(s, dict)}:
                _problem(details, "goal.state", f"version {arm['version']} has no state '{goal}'; the goal must "
                                                "be a state of every arm")
    if details:
        problems = "; ".join(f"{d['path']}: {d['message']}" for d in details)
        raise Unprocessable(f"The experiment cannot start: {problems}.", code="invalid_experiment", details=details)
    return body
