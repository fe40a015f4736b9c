"""Human-readable trigger labels shared by the diagram exports."""
from __future__ import annotations

from flows.model import Transition
from flows.templates import value_text


def trigger(tr: Transition) -> str:
    """What fires the transition, e.g. `button: yes`, `text: да|yes`, `timeout 60s`."""
    if tr.on == "button":
        return f"button: {tr.payload}"
    if tr.on == "text":
        alternatives = list(tr.match) + ([f"/{tr.pattern}/"] if tr.pattern else [])
        return f"text: {'|'.join(alternatives)}"
    if tr.on == "attachment":
        return f"attachment: {'|'.join(tr.kinds)}" if tr.kinds else "attachment"
    if tr.on == "event":
        return f"event: {tr.name}"
    if tr.on == "timeout" and tr.after is not None:
        return f"timeout {value_text(tr.after)}s"
    return tr.on


def edge_label(tr: Transition) -> str:
    """The trigger, with an `[if]` marker when the transition is guarded."""
    label = trigger(tr)
    return f"{label} [if]" if tr.conditions else label
