"""The flow as a networkx MultiDiGraph, plus the reachability facts several checks share."""
from __future__ import annotations

import networkx as nx

from flows.model import Flow, State, Transition


def build_graph(flow: Flow) -> nx.MultiDiGraph:
    """One node per state id (the first state wins a duplicate id), one edge per transition that can move.

    An edge needs both ends to exist and a non-final source: entering a final state ends the dialog,
    so transitions out of it never fire (`final_has_exit` reports them) and must not make anything
    reachable. Every trigger kind is an edge, `timeout` and `invalid` included. Transitions that can
    never fire for other reasons stay in: they are reported on themselves, so one mistake is one issue.
    Edge keys are the transition's position in the document, so duplicate ids still get their own edge;
    the edge attribute `transition` holds the Transition.
    """
    graph = nx.MultiDiGraph()
    for state in states(flow):
        graph.add_node(state.id, state=state)
    graph.add_edges_from(
        (tr.source, tr.target, index, {"transition": tr})
        for index, tr in enumerate(flow.transitions)
        if _moves(flow, tr)
    )
    return graph


def _moves(flow: Flow, tr: Transition) -> bool:
    source = flow.state(tr.source)
    return source is not None and not source.final and flow.has_state(tr.target)


def states(flow: Flow) -> list[State]:
    """The states the flow runs with, in document order: for a duplicate id, the first one."""
    return [state for state in flow.states if flow.state(state.id) is state]


def start_known(flow: Flow) -> bool:
    """Whether `start` names an existing state."""
    return bool(flow.start) and flow.has_state(flow.start)


def reachable(flow: Flow, graph: nx.MultiDiGraph) -> frozenset[str]:
    """States a dialog can be in: those reachable from `start`, or all of them when `start` is unknown.

    Without a known start nothing can be said about reachability (`no_start`/`unknown_state` report
    that), so checks about what a user may run into treat every state as reachable.
    """
    cached = graph.graph.get("reachable")
    if cached is None:
        if start_known(flow):
            cached = frozenset(nx.descendants(graph, flow.start) | {flow.start})
        else:
            cached = frozenset(graph.nodes)
        graph.graph["reachable"] = cached
    return cached


def finishing(flow: Flow, graph: nx.MultiDiGraph) -> frozenset[str]:
    """States from which some final state can be reached (final states included)."""
    cached = graph.graph.get("finishing")
    if cached is None:
        finals = [state.id for state in states(flow) if state.final]
        if finals:
            layers = nx.bfs_layers(graph.reverse(copy=False), finals)
            cached = frozenset(node for layer in layers for node in layer)
        else:
            cached = frozenset()
        graph.graph["finishing"] = cached
    return cached
