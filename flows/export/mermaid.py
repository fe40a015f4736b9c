"""Mermaid `stateDiagram-v2` export."""
from __future__ import annotations

from flows.export.labels import edge_label
from flows.model import Flow

# Mermaid reads these as HTML-ish markup, statement ends or entity codes; it decodes `#name;` back.
_ENTITIES = {"#": "#35;", ";": "#59;", '"': "#quot;", "<": "#lt;", ">": "#gt;",
             "{": "#123;", "}": "#125;"}
# Words the stateDiagram grammar treats as keywords; a state id equal to one gets an alias.
_KEYWORDS = frozenset({"state", "note", "direction", "class", "classdef", "style", "end",
                       "click", "as", "left", "right", "of", "over", "hide", "default"})


def escape(text: str) -> str:
    """Text safe inside a Mermaid label or quoted state description."""
    flat = " ".join(text.split())
    return "".join(_ENTITIES.get(ch, ch) for ch in flat)


def _node_ids(flow: Flow) -> dict[str, str]:
    """Map every state id (also ones only referenced) to the id used in the diagram."""
    ids = [s.id for s in flow.states]
    ids += [x for tr in flow.transitions for x in (tr.source, tr.target)]
    if flow.start:
        ids.append(flow.start)
    taken = set(ids)
    names: dict[str, str] = {}
    for state_id in ids:
        if state_id in names:
            continue
        name = state_id
        while name.lower() in _KEYWORDS or (name != state_id and name in taken):
            name += "_"
        taken.add(name)
        names[state_id] = name
    return names


def render(flow: Flow) -> str:
    """The flow as a Mermaid state diagram."""
    node = _node_ids(flow)
    lines = ["stateDiagram-v2"]
    for state in flow.states:
        title = state.title or (state.id if node[state.id] != state.id else "")
        lines.append(f'    state "{escape(title)}" as {node[state.id]}' if title else f"    {node[state.id]}")
    if flow.start:
        lines.append(f"    [*] --> {node[flow.start]}")
    for tr in flow.transitions:
        lines.append(f"    {node[tr.source]} --> {node[tr.target]}: {escape(edge_label(tr))}")
    for state in flow.states:
        if state.final:
            lines.append(f"    {node[state.id]} --> [*]")
    return "\n".join(lines) + "\n"
