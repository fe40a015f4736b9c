"""Checks on the flow's skeleton: a start, names that resolve, ids that are unique."""
from __future__ import annotations

import difflib
from collections import Counter

from flows.model import Flow
from flows.validate.graph import FlowGraph, by_id
from flows.validate.issue import Issue, issue, names


def check_no_start(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """`start` is missing or empty."""
    if flow.start and flow.start.strip():
        return []
    hint = f' (e.g. "{flow.states[0].id}")' if flow.states else ""
    return [issue("no_start", "The flow has no start state. Set \"start\" to the state where a new dialog"
                              f" begins{hint}.")]


def check_unknown_state(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """`start` or a transition's `from`/`to` names a state that does not exist: one issue per missing id."""
    known = by_id(graph)
    from_start: set[str] = set()
    referrers: dict[str, list[str]] = {}
    if flow.start and flow.start.strip() and flow.start not in known:
        from_start.add(flow.start)
        referrers[flow.start] = []
    for tr in flow.transitions:
        if tr.source in known and tr.target in known:
            continue
        for end in (tr.source, tr.target):
            if end not in known:
                referrers.setdefault(end, [])
                if tr.id not in referrers[end]:
                    referrers[end].append(tr.id)
    found: list[Issue] = []
    for missing, transitions in referrers.items():
        who = []
        if missing in from_start:
            who.append("the flow's start")
        if transitions:
            who.append(("transition " if len(transitions) == 1 else "transitions ") + names(transitions))
        verb = "names" if len(who) == 1 and len(transitions) < 2 else "name"
        # Suggestions cost a scan of every id each; a handful of typos is what a person fixes at once.
        close = difflib.get_close_matches(missing, list(known), n=1, cutoff=0.6) if len(found) < 10 else []
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        found.append(issue(
            "unknown_state",
            f'There is no state "{missing}", but {" and ".join(who)} {verb} it. Create that state or'
            f" correct the name{hint}.",
            states=[missing], transitions=transitions, state=missing, start=missing in from_start,
        ))
    return found


def check_duplicate_id(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """Two states, or two transitions, share an id: one issue per repeated id."""
    found: list[Issue] = []
    if len(graph) == len(flow.states) and len({tr.id for tr in flow.transitions}) == len(flow.transitions):
        return found
    state_counts = Counter(state.id for state in flow.states)
    for state_id, count in state_counts.items():
        if count > 1:
            found.append(issue(
                "duplicate_id",
                f'{count} states share the id "{state_id}"; only the first one is used. Give each state'
                " its own id.",
                states=[state_id], kind="state", id=state_id, count=count,
            ))
    sources_by_id: dict[str, list[str]] = {}
    for tr in flow.transitions:
        sources_by_id.setdefault(tr.id, []).append(tr.source)
    for tr_id, sources in sources_by_id.items():
        count = len(sources)
        if count > 1:
            found.append(issue(
                "duplicate_id",
                f'{count} transitions share the id "{tr_id}" (from {names(dict.fromkeys(sources))}).'
                " Give each transition its own id.",
                states=sources, transitions=[tr_id], kind="transition", id=tr_id, count=count,
            ))
    return found
