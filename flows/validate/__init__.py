"""Graph validation of a flow: named checks that each return the issues they find.

`validate(flow)` runs every check in `CHECKS` (errors first, then warnings, each check's issues in
document order) and returns one deterministic list.
"""
from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from flows.model import Flow
from flows.validate.dataflow import available_keys, check_undefined_variable
from flows.validate.graph import FlowGraph, build_graph
from flows.validate.issue import ERROR, SEVERITIES, WARNING, Issue
from flows.validate.reachability import (
    check_dead_end, check_final_has_exit, check_missing_cancel, check_no_path_to_final, check_unreachable_state,
)
from flows.validate.structure import check_duplicate_id, check_no_start, check_unknown_state
from flows.validate.texts import check_message_too_long, check_missing_translation, check_unformatted_markup
from flows.validate.transitions import check_ambiguous_transition, check_unreachable_transition

__all__ = ["CHECKS", "ERROR", "SEVERITIES", "WARNING", "Issue", "available_keys", "bounded", "build_graph",
           "has_errors", "validate", "validation_result"]

Check = Callable[[Flow, FlowGraph], list[Issue]]
# A validation answer lists this many issues of one code, then says how many more there are; one
# issue highlights at most NAMES states (and transitions).
PER_CODE = 100
NAMES = 500

CHECKS: tuple[Check, ...] = (
    check_no_start,
    check_unknown_state,
    check_duplicate_id,
    check_unreachable_state,
    check_dead_end,
    check_no_path_to_final,
    check_missing_cancel,
    check_ambiguous_transition,
    check_message_too_long,
    check_final_has_exit,
    check_unreachable_transition,
    check_undefined_variable,
    check_unformatted_markup,
    check_missing_translation,
)


def validate(flow: Flow) -> list[Issue]:
    """Every issue in the flow, in a fixed order: errors (block freezing) before warnings."""
    with _collector_paused():
        graph = build_graph(flow)
        issues: list[Issue] = []
        for check in CHECKS:
            issues.extend(check(flow, graph))
    return issues


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while the checks run.

    The checks allocate many short-lived, acyclic containers (graph adjacency, edge tuples); each
    full collection they trigger walks every object of the loaded flow and costs more than the
    checks themselves on a large flow. Reference counting still frees everything at once.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def has_errors(issues: Iterable[Issue]) -> bool:
    """Whether any issue is an error."""
    return any(item.severity == ERROR for item in issues)


def validation_result(flow: Flow) -> dict[str, Any]:
    """The body of `GET /api/flows/{id}/validation`: `{"ok", "issues"}`, kept proportionate by `bounded`."""
    issues = validate(flow)
    return {"ok": not has_errors(issues), "issues": [item.to_dict() for item in bounded(issues)]}


def bounded(issues: list[Issue], per_code: int = PER_CODE, names: int = NAMES) -> list[Issue]:
    """The first `per_code` issues of each code, then one saying how many more; at most `names` names each."""
    seen: Counter[str] = Counter()
    kept: list[Issue] = []
    for found in issues:
        seen[found.code] += 1
        if seen[found.code] <= per_code:
            if len(found.states) > names or len(found.transitions) > names:
                found = replace(found, states=found.states[:names], transitions=found.transitions[:names])
            kept.append(found)
    for code, count in seen.items():
        if count > per_code:
            more = count - per_code
            kept.append(Issue(code, SEVERITIES[code],
                              f"{more:,} more {code} issue{'s' if more > 1 else ''} like the ones above are not listed;"
                              " fix those and validate again to see the rest.", params={"more": more}))
    order = {code: i for i, code in enumerate(dict.fromkeys(found.code for found in issues))}
    kept.sort(key=lambda found: (found.severity != ERROR, order[found.code]))  # stable: summaries stay last
    return kept
