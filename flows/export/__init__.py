"""Exports of a flow: the document itself (json, yaml) and diagrams (mermaid, dot, scxml)."""
from __future__ import annotations

from collections.abc import Callable

from flows.canonical import dump_json, dump_yaml
from flows.export import dot, mermaid, scxml
from flows.model import Flow

EXPORT_FORMATS = ("json", "yaml", "mermaid", "dot", "scxml")

MEDIA_TYPES = {
    "json": "application/json",
    "yaml": "application/yaml; charset=utf-8",
    # text/* types carry no charset here: web frameworks append "; charset=utf-8" to them themselves.
    "mermaid": "text/vnd.mermaid",
    "dot": "text/vnd.graphviz",
    "scxml": "application/scxml+xml; charset=utf-8",
}

_RENDERERS: dict[str, Callable[[Flow], str]] = {
    "json": lambda flow: dump_json(flow.document),
    "yaml": lambda flow: dump_yaml(flow.document),
    "mermaid": mermaid.render,
    "dot": dot.render,
    "scxml": scxml.render,
}


def export(flow: Flow, fmt: str) -> tuple[str, str]:
    """The flow in format `fmt` as (text, media type); ValueError names the formats on offer."""
    if fmt not in _RENDERERS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}")
    return _RENDERERS[fmt](flow), MEDIA_TYPES[fmt]
