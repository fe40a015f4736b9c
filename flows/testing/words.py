"""What a person reads in generated tests and their reports: state titles and button texts, not ids."""
from __future__ import annotations

from typing import Any, Iterable

from flows.model import Flow


def state_title(flow: Flow, state_id: str | None) -> str:
    """The state's title, or its id when it has none (or no longer exists)."""
    st = flow.state(state_id) if state_id is not None else None
    return (st.title or st.id) if st is not None else str(state_id)


def button_text(flow: Flow, state_id: str | None, payload: str | None) -> str | None:
    """The text of the button with this payload in the state's messages or the reminder, if there is one."""
    st = flow.state(state_id) if state_id is not None else None
    rows = [row for m in st.say for row in m.buttons] if st is not None else []
    if flow.settings.reminder is not None:
        rows += list(flow.settings.reminder.buttons)
    return next((b.text for row in rows for b in row if b.payload is not None and b.payload == payload), None)


def _step_words(flow: Flow, key: str) -> str | None:
    kind, _, rest = key.partition(":")
    if kind == "transition":
        tr = next((t for t in flow.transitions if t.id == rest), None)
        if tr is None:
            return rest
        if tr.on == "button":
            text = button_text(flow, tr.source, tr.payload)
            return f"«{text}»" if text else f"[{tr.payload}]"
        return state_title(flow, tr.target)
    if kind == "button":
        state, _, payload = rest.partition(":")
        text = button_text(flow, state, payload)
        return f"«{text}»" if text else f"[{payload}]"
    if kind == "invalid":
        return f"✗ {state_title(flow, rest)}"
    if kind == "command":
        cmd = flow.commands.get(rest)
        return cmd.match[0] if cmd is not None and cmd.match else rest
    if kind == "reminder":
        return "⏰"
    return None


def case_name(flow: Flow, touched: Iterable[str], fired: list[str], index: int, origin: str) -> str:
    """`3: Имя → Готово (Телефон, Email, «Да»)`: titles, button texts (quoted), commands as typed, ✗ for
    invalid input and ⏰ for the reminder, so it reads the same in every language of the page."""
    by_id = {tr.id: tr for tr in flow.transitions}
    last = by_id.get(fired[-1]) if fired else None
    start = state_title(flow, origin)
    where = f"{start} → {state_title(flow, last.target)}" if last is not None else start
    keys = list(touched)
    if keys and keys[0] == "command:restart":
        keys = keys[1:]  # the /start every generated dialog opens with says nothing about it
    keys = list(dict.fromkeys(keys))
    # A pressed button that fired its transition is named once, by the transition.
    pressed = {f"button:{by_id[k[11:]].source}:{by_id[k[11:]].payload}" for k in keys
               if k.startswith("transition:") and k[11:] in by_id and by_id[k[11:]].on == "button"}
    words = [w for k in keys if k not in pressed for w in [_step_words(flow, k)] if w]
    via = f" ({', '.join(dict.fromkeys(words))})" if words else ""
    return f"{index}: {where}{via}"[:200]


def step_shown(flow: Flow, state_id: str | None, raw: dict[str, Any], plain: str) -> str:
    """An update as a reader says it: a press by the button's text when the state has that button."""
    if "payload" in raw and "event" not in raw:
        text = button_text(flow, state_id, raw.get("payload"))
        if text is not None:
            return f"press «{text}»"
    return plain
