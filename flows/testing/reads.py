"""The data keys a state reads: its templates (messages, buttons, error), the `if` and `set` of its transitions."""
from __future__ import annotations

from flows.model import Flow
from flows.templates import placeholders


def keys_read(flow: Flow, state_id: str) -> list[str]:
    """Keys in order of first appearance, to pre-fill the data of a dialog started at this state."""
    state = flow.state(state_id)
    if state is None:
        return []
    keys: list[str] = []
    texts = [m.text for m in state.say] + [b.text for m in state.say for row in m.buttons for b in row]
    if state.input is not None and state.input.error:
        texts.append(state.input.error)
    for text in texts:
        keys += placeholders(text)
    for tr in flow.outgoing(state_id):
        keys += [c.var for c in tr.conditions]
        for _, value in tr.set:
            if isinstance(value, str):
                keys += placeholders(value)
        target = flow.state(tr.target)
        if target is not None:
            keys += [k for m in target.say for k in placeholders(m.text)]
    saved = state.input.save_as if state.input is not None else None
    return [k for k in dict.fromkeys(keys) if k != saved]


def live_payloads(flow: Flow, state_id: str | None) -> list[str]:
    """Button payloads a press of which the dialog at this state still takes (others are stale):
    the state's own and reminder buttons, its button triggers, and command texts (lower-cased)."""
    from flows.firing import plan

    fp = plan(flow)
    live = set(fp.commands)
    sp = fp.states.get(state_id) if state_id is not None else None
    if sp is not None:
        live |= sp.own_payloads
        live |= {tr.payload for on, tr, _, _ in sp.matchers if on == "button" and tr.payload is not None}
    return sorted(live)
