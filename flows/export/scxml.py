"""W3C SCXML export: one `<state>`/`<final>` per state, one `<transition>` per transition."""
from __future__ import annotations

import json
import re

from flows.model import Condition, Flow, Transition
from flows.templates import value_text

SCXML_NS = "http://www.w3.org/2005/07/scxml"
BOTFLOW_NS = "urn:botflow:scxml:1"
HTTP_PROCESSOR = "http://www.w3.org/TR/scxml/#BasicHTTPEventProcessor"

_TOKEN = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
# Characters XML 1.0 cannot carry at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _attr(value: str) -> str:
    """A double-quoted XML attribute value; line breaks survive attribute normalisation."""
    text = _NOT_XML.sub("", value)
    for raw, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"),
                        ("\n", "&#10;"), ("\r", "&#13;"), ("\t", "&#9;")):
        text = text.replace(raw, entity)
    return f'"{text}"'


def _element(tag: str, attrs: dict[str, str | None], children: list[str], indent: str) -> list[str]:
    """Lines of one element; attributes with value None are left out."""
    head = tag + "".join(f" {k}={_attr(v)}" for k, v in attrs.items() if v is not None)
    if not children:
        return [f"{indent}<{head}/>"]
    return [f"{indent}<{head}>", *children, f"{indent}</{tag}>"]


def _event(tr: Transition) -> str:
    """An SCXML event descriptor: the trigger, dotted with the payload or event name when it is a token."""
    detail = tr.payload if tr.on == "button" else tr.name if tr.on == "event" else None
    return f"{tr.on}.{detail}" if detail and _TOKEN.match(detail) else tr.on


def _operand(var: str) -> str:
    return var if _IDENT.match(var) else f"this[{json.dumps(var, ensure_ascii=False)}]"


def _condition(c: Condition) -> str:
    """One `if` clause as an ECMAScript expression over the data model."""
    var, value = _operand(c.var), json.dumps(c.value, ensure_ascii=False)
    if c.op in _COMPARE:
        return f"{var} {_COMPARE[c.op]} {value}"
    if c.op in ("in", "not_in"):
        return f"{value}.indexOf({var}) {'>=' if c.op == 'in' else '<'} 0"
    if c.op in ("set", "unset"):
        return f"{var} {'!=' if c.op == 'set' else '=='} null"
    return f"new RegExp({value}).test({var})"  # matches


def _transition(tr: Transition, tag: str, indent: str, source: str | None = None) -> list[str]:
    attrs = {
        "event": _event(tr), "target": tr.target,
        "cond": " && ".join(_condition(c) for c in tr.conditions) or None,
        "botflow:id": tr.id, "botflow:on": tr.on, "botflow:source": source,
        "botflow:payload": tr.payload, "botflow:name": tr.name,
        "botflow:match": json.dumps(list(tr.match), ensure_ascii=False) if tr.match else None,
        "botflow:pattern": tr.pattern,
        "botflow:kinds": " ".join(tr.kinds) or None,
        "botflow:after": value_text(tr.after) if tr.after is not None else None,
    }
    inner = indent + "  "
    body = [f"{inner}<assign location={_attr(key)} expr={_attr(json.dumps(tpl, ensure_ascii=False))}/>"
            for key, tpl in tr.set]
    for action in tr.actions:
        if action.type == "webhook":
            body += _element("send", {"event": "botflow.webhook", "type": HTTP_PROCESSOR,
                                      "target": action.url}, [], inner)
        else:
            body += _element("botflow:action", {"type": action.type, "url": action.url}, [], inner)
    return _element(tag, attrs, body, indent)


def render(flow: Flow) -> str:
    """The flow as an SCXML document; transitions out of final states are kept as `botflow:transition`."""
    lines: list[str] = []
    placed: set[str] = set()
    for state in flow.states:
        outgoing = [] if state.id in placed else flow.outgoing(state.id)
        placed.add(state.id)
        # SCXML forbids <transition> in <final>; such exits never fire anyway (final_has_exit).
        tag = "botflow:transition" if state.final else "transition"
        children = [line for tr in outgoing for line in _transition(tr, tag, "    ")]
        attrs = {"id": state.id, "botflow:title": state.title or None,
                 "botflow:input": state.input.type if state.input else None}
        lines += _element("final" if state.final else "state", attrs, children, "  ")
    for tr in flow.transitions:
        if tr.source not in placed:  # leaves a state that does not exist (unknown_state)
            lines += _transition(tr, "botflow:transition", "  ", source=tr.source)
    root = {"xmlns": SCXML_NS, "xmlns:botflow": BOTFLOW_NS, "version": "1.0",
            "datamodel": "ecmascript", "name": flow.id or None, "initial": flow.start or None,
            "botflow:title": flow.title or None}
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', *_element("scxml", root, lines, "")]) + "\n"
