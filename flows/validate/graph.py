"""The flow as a networkx MultiDiGraph, plus the reachability facts several checks share."""
from __future__ import annotations

from typing import TypeAlias

import networkx as nx

from flows.model import Flow, State

# Nodes are state ids; `nx.MultiDiGraph` is generic only in the stubs, hence the quoted alias.
FlowGraph: TypeAlias = "nx.MultiDiGraph[str]"


def build_graph(flow: Flow) -> FlowGraph:
    """One node per state id (the first state wins a duplicate id), one edge per transition that can move.

    An edge needs both ends to exist and a non-final source: entering a final state ends the dialog,
    so transitions out of it never fire (`final_has_exit` reports them) and must not make anything
    reachable. Every trigger kind is an edge, `timeout` and `invalid` included. Transitions that can
    never fire for other reasons stay in (reachability must not cascade from one mistake, which is
    reported on the transition itself); the data-flow analysis skips them (`dead_transitions`).
    Edge keys are the transition's position in the document, so duplicate ids still get their own edge;
    the edge attribute `transition` holds the Transition.
    """
    first: dict[str, State] = {}
    for state in flow.states:
        first.setdefault(state.id, state)
    graph: FlowGraph = nx.MultiDiGraph()
    graph.add_nodes_from((state_id, {"state": state}) for state_id, state in first.items())
    graph.graph["states"] = list(first.values())
    graph.graph["by_id"] = first
    moving = {state_id for state_id, state in first.items() if not state.final}
    add = graph.add_edge  # one call per edge is faster than add_edges_from's per-item checks
    for index, tr in enumerate(flow.transitions):
        if tr.source in moving and tr.target in first:
            add(tr.source, tr.target, index, transition=tr)
    return graph


def states(flow: Flow, graph: FlowGraph) -> list[State]:
    """The states the flow runs with, in document order: for a duplicate id, the first one."""
    found: list[State] = graph.graph["states"]
    return found


def by_id(graph: FlowGraph) -> dict[str, State]:
    """The states the flow runs with, by id (a plain dict: faster membership tests than `graph.nodes`)."""
    found: dict[str, State] = graph.graph["by_id"]
    return found


def start_known(flow: Flow) -> bool:
    """Whether `start` names an existing state."""
    return bool(flow.start) and flow.has_state(flow.start)


def reachable(flow: Flow, graph: FlowGraph) -> frozenset[str]:
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


def finishing(flow: Flow, graph: FlowGraph) -> frozenset[str]:
    """States from which some final state can be reached (final states included)."""
    cached = graph.graph.get("finishing")
    if cached is None:
        finals = [state.id for state in states(flow, graph) if state.final]
        if finals:
            layers = nx.bfs_layers(graph.reverse(copy=False), finals)
            cached = frozenset(node for layer in layers for node in layer)
        else:
            cached = frozenset()
        graph.graph["finishing"] = cached
    return cached
