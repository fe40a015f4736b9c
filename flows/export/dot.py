"""Graphviz DOT export."""
from __future__ import annotations

from flows.export.labels import edge_label
from flows.model import Flow

# Cannot collide with a state: state ids start with a letter.
START_NODE = "__start__"


def quote(text: str) -> str:
    """A DOT double-quoted string; backslashes and quotes escaped, line breaks as `\\n`."""
    body = text.replace("\\", "\\\\").replace('"', '\\"')
    body = body.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{body}"'


def render(flow: Flow) -> str:
    """The flow as a directed graph: start marked by a point, final states as double circles."""
    lines = [f"digraph {quote(flow.id or 'flow')} {{",
             f"  label={quote(flow.title)};",
             "  labelloc=t;",
             "  rankdir=TB;",
             '  node [shape=box, style=rounded, fontname="sans-serif"];',
             '  edge [fontname="sans-serif", fontsize=10];']
    if flow.start:
        lines.append(f'  {START_NODE} [shape=point, width=0.15, label=""];')
    for state in flow.states:
        label = f"{state.title}\n({state.id})" if state.title else state.id
        attrs = f"label={quote(label)}"
        if state.final:
            attrs += ", shape=doublecircle"
        if state.id == flow.start:
            attrs += ", penwidth=2"
        lines.append(f"  {quote(state.id)} [{attrs}];")
    if flow.start:
        lines.append(f"  {START_NODE} -> {quote(flow.start)};")
    for tr in flow.transitions:
        lines.append(f"  {quote(tr.source)} -> {quote(tr.target)} "
                     f"[id={quote(tr.id)}, label={quote(edge_label(tr))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
