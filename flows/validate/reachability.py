"""Checks on where a dialog can go: reachable states, ways on, ways to an end, ways out early."""
from __future__ import annotations

from flows.model import Flow
from flows.validate.graph import FlowGraph, finishing, reachable, start_known, states
from flows.validate.issue import Issue, issue, names


def check_unreachable_state(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """No path from `start` reaches the state (every trigger kind counts as a path).

    Skipped while `start` is missing or unknown: those issues already say what to fix, and every
    state would otherwise be reported.
    """
    if not start_known(flow):
        return []
    seen = reachable(flow, graph)
    return [
        issue("unreachable_state",
              f'State "{state.id}" cannot be reached from the start state "{flow.start}". Add a transition'
              " into it from a reachable state, or delete it.",
              states=[state.id], state=state.id)
        for state in states(flow, graph) if state.id not in seen
    ]


def check_dead_end(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A non-final state with no transition out; global commands do not count as a way on."""
    return [
        issue("dead_end",
              f'State "{state.id}" is not final but has no transition out, so a dialog that gets there is'
              ' stuck. Add a transition from it, or mark it "final": true.',
              states=[state.id], state=state.id)
        for state in states(flow, graph) if not state.final and not flow.outgoing(state.id)
    ]


def check_no_path_to_final(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """One issue per reachable state from which no final state can be reached (a trap).

    Dead ends are left to `dead_end` (the clearer message for the same fault) and unreachable states
    to `unreachable_state` (no user can be trapped where no dialog goes); the states leading into a
    dead end are traps and reported here.
    """
    seen = reachable(flow, graph)
    done = finishing(flow, graph)
    any_final = any(state.final for state in states(flow, graph))
    found: list[Issue] = []
    for state in states(flow, graph):
        if state.final or state.id in done or state.id not in seen or not flow.outgoing(state.id):
            continue
        if not any_final:
            why = 'the flow has no final state. Mark the state where the dialog ends "final": true.'
        else:
            onward = [node for node in graph.successors(state.id) if node != state.id]
            where = (f"its transitions lead only to {names(onward)}, and none of them can reach one" if onward
                     else "none of its transitions leads to another existing state")
            why = (f"{where}. Add a transition from this state, or from a state it leads to, into a final"
                   " state.")
        found.append(issue("no_path_to_final",
                           f'No final state can be reached from state "{state.id}": {why}',
                           states=[state.id], state=state.id, no_final=not any_final))
    return found


def check_final_has_exit(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A final state with outgoing transitions: the dialog ends on entry, so they never fire."""
    found: list[Issue] = []
    for state in states(flow, graph):
        exits = [tr.id for tr in flow.outgoing(state.id)] if state.final else None
        if exits:
            found.append(issue(
                "final_has_exit",
                f'State "{state.id}" is final, so the dialog ends there and its'
                f' {"transition" if len(exits) == 1 else "transitions"} {names(exits)}'
                f' never {"fires" if len(exits) == 1 else "fire"}. Remove {"it" if len(exits) == 1 else "them"},'
                " or make the state non-final.",
                states=[state.id], transitions=exits, state=state.id,
            ))
    return found


def check_missing_cancel(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A reachable waiting (non-final) state the user cannot leave early.

    That is: the `cancel` command is disabled and no `text` or `button` transition from the state
    goes straight to a final state. Unreachable states are left to `unreachable_state`.
    """
    cancel = flow.command("cancel")
    if cancel is not None and cancel.match:  # `"match": []` never matches: as disabled as null
        return []
    seen = reachable(flow, graph)
    found: list[Issue] = []
    for state in states(flow, graph):
        if state.final or state.id not in seen:
            continue
        if any(_ends(flow, tr.target) for tr in flow.outgoing(state.id) if tr.on in ("text", "button")):
            continue
        found.append(issue(
            "missing_cancel",
            f'A user in state "{state.id}" cannot leave early: the cancel command is disabled and no text or'
            " button transition leads from it straight to a final state. Enable cancel, or add such a"
            ' transition (e.g. a "Cancel" button).',
            states=[state.id], state=state.id,
        ))
    return found


def _ends(flow: Flow, state_id: str) -> bool:
    target = flow.state(state_id)
    return target is not None and target.final
