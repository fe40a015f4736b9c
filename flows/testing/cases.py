"""Saved dialog tests: the JSON shape, checked with one detail per problem, as typed data."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flows.testing.updates import BadUpdate, parse_update

MAX_TESTS = 2000
MAX_STEPS = 500
MAX_NAME = 200
EXPECT_KEYS = ("replies", "buttons", "state", "data")


class BadTests(ValueError):
    """A test list that breaks the format; `details` holds one {"path", "message"} per problem."""

    def __init__(self, details: list[dict[str, str]]) -> None:
        first = details[0]
        more = f" (and {len(details) - 1} more problems)" if len(details) > 1 else ""
        super().__init__(f"The tests are not valid: {first['path']}: {first['message']}{more}.")
        self.message = str(self)
        self.details = details


@dataclass(slots=True)
class Step:
    """One update and what to expect after it; a key absent from `expect` is not checked."""

    update: dict[str, Any]
    expect: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"update": self.update, "expect": self.expect}


@dataclass(slots=True)
class Case:
    """A named dialog: optional starting point (state and data), then steps."""

    name: str
    steps: list[Step]
    start: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {"name": self.name}
        if self.start is not None:
            out["start"] = self.start
        out["steps"] = [s.to_dict() for s in self.steps]
        return out


def _check_expect(raw: Any, path: str, problems: list[dict[str, str]]) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append({"path": path, "message": "expect must be an object with replies, buttons, state, data"})
        return {}
    unknown = sorted(set(raw) - set(EXPECT_KEYS))
    if unknown:
        problems.append({"path": path, "message": f"unknown fields {', '.join(unknown)}; "
                                                  f"use {', '.join(EXPECT_KEYS)}"})
    replies = raw.get("replies")
    if "replies" in raw and (not isinstance(replies, list) or not all(isinstance(r, str) for r in replies)):
        problems.append({"path": f"{path}.replies", "message": "a list of the reply texts, in order"})
    buttons = raw.get("buttons")
    if "buttons" in raw and not _is_button_lists(buttons):
        problems.append({"path": f"{path}.buttons",
                         "message": "per reply, a list of rows of button texts, e.g. [[[\"Yes\", \"No\"]]]"})
    if "state" in raw and raw["state"] is not None and not isinstance(raw["state"], str):
        problems.append({"path": f"{path}.state", "message": "a state id, or null once the dialog ended"})
    if "data" in raw and not isinstance(raw["data"], dict):
        problems.append({"path": f"{path}.data", "message": "an object of the data keys to check"})
    return {k: raw[k] for k in EXPECT_KEYS if k in raw}


def _is_button_lists(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(rows, list) and all(isinstance(row, list) and all(isinstance(t, str) for t in row)
                                       for row in rows) for rows in value)


def _check_start(raw: Any, path: str, problems: list[dict[str, str]]) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("state"), str) or not raw["state"]:
        problems.append({"path": path, "message": "start must be {\"state\": \"<state id>\", \"data\": {...}}"})
        return None
    data = raw.get("data", {})
    if not isinstance(data, dict):
        problems.append({"path": f"{path}.data", "message": "the starting data must be an object"})
        data = {}
    unknown = sorted(set(raw) - {"state", "data"})
    if unknown:
        problems.append({"path": path, "message": f"unknown fields {', '.join(unknown)}; use state and data"})
    return {"state": raw["state"], "data": data}


def parse_cases(raw: Any) -> list[Case]:
    """`{"tests": [...]}` or a bare list as cases; BadTests with one detail per problem."""
    if isinstance(raw, dict) and set(raw) <= {"tests", "flow"}:
        raw = raw.get("tests")
    if not isinstance(raw, list):
        raise BadTests([{"path": "tests", "message": "expected a list of tests: {\"tests\": [...]}"}])
    problems: list[dict[str, str]] = []
    if len(raw) > MAX_TESTS:
        raise BadTests([{"path": "tests", "message": f"at most {MAX_TESTS} tests per flow"}])
    cases: list[Case] = []
    names: set[str] = set()
    for i, item in enumerate(raw):
        path = f"tests[{i}]"
        if not isinstance(item, dict):
            problems.append({"path": path, "message": "a test is an object with name and steps"})
            continue
        unknown = sorted(set(item) - {"name", "start", "steps"})
        if unknown:
            problems.append({"path": path, "message": f"unknown fields {', '.join(unknown)}; "
                                                      "use name, start, steps"})
        name = item.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            problems.append({"path": f"{path}.name", "message": f"a name of 1-{MAX_NAME} characters"})
            name = f"test {i + 1}"
        elif name in names:
            problems.append({"path": f"{path}.name", "message": f"another test is already named {name!r}"})
        names.add(name)
        start = _check_start(item.get("start"), f"{path}.start", problems)
        steps_raw = item.get("steps")
        if not isinstance(steps_raw, list) or not steps_raw or len(steps_raw) > MAX_STEPS:
            problems.append({"path": f"{path}.steps", "message": f"a list of 1-{MAX_STEPS} steps"})
            continue
        steps: list[Step] = []
        for j, s in enumerate(steps_raw):
            spath = f"{path}.steps[{j}]"
            if not isinstance(s, dict) or "update" not in s or set(s) - {"update", "expect"}:
                problems.append({"path": spath, "message": "a step is {\"update\": {...}, \"expect\": {...}}"})
                continue
            try:
                parse_update(s["update"], f"{spath}.update")
            except BadUpdate as exc:
                problems.append({"path": exc.path, "message": exc.message})
                continue
            steps.append(Step(s["update"], _check_expect(s.get("expect"), f"{spath}.expect", problems)))
        cases.append(Case(name, steps, start))
    if problems:
        raise BadTests(problems)
    return cases
