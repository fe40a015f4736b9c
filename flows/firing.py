"""Per-flow lookups compiled once, rendering of a state's messages, and firing a transition."""
from __future__ import annotations

from typing import Any

from flows.conditions import holds
from flows.limits import MAX_DATA_BYTES, RENDER_LIMIT
from flows.model import BUTTON_TEXT_LIMIT, COMMANDS, HISTORY_LIMIT, MESSAGE_LIMIT, Button, Flow, State, Transition
from flows.patterns import Pattern, compile_pattern
from flows.session import Effect, Reply, Session
from flows.templates import Compiled, compile_template, render_capped, split_text

# (compiled text, rows of (compiled button text, "payload"|"url"|"request", value))
CompiledMessage = tuple[Compiled, tuple[tuple[tuple[Compiled, str, str], ...], ...]]


class StatePlan:
    """Everything step() needs about one state, looked up once."""

    __slots__ = ("state", "messages", "static", "input", "error", "matchers", "on_input", "on_invalid",
                 "on_else", "timeout", "own_payloads")

    def __init__(self, state: State, messages: tuple[CompiledMessage, ...]) -> None:
        self.state = state
        self.messages = messages
        # Texts of messages that need no rendering (no placeholder, no keyboard, short), else None.
        self.static: tuple[str, ...] | None = tuple(m[0] for m in messages) if all(
            not rows and text.__class__ is str and len(text) <= MESSAGE_LIMIT for text, rows in messages) else None
        self.input = state.input
        self.error: Compiled | None = (compile_template(state.input.error)
                                       if state.input is not None and state.input.error else None)
        # (trigger, transition, lowered match set, compiled pattern) for step 3, in document order.
        self.matchers: list[tuple[str, Transition, frozenset[str], Pattern | None]] = []
        self.on_input: list[Transition] = []
        self.on_invalid: list[Transition] = []
        self.on_else: list[Transition] = []
        self.timeout: Transition | None = None
        self.own_payloads: frozenset[str] = frozenset()


class FlowPlan:
    """A flow's lookups: command match table, state plans, compiled settings texts."""

    __slots__ = ("flow", "states", "commands", "fallback", "reminder")

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        reminder = flow.settings.reminder
        self.reminder = _compile_message(reminder.text, reminder.buttons) if reminder else None
        reminder_payloads = _payloads(reminder.buttons) if reminder else set()
        self.fallback = compile_template(flow.settings.fallback)
        # First command in COMMANDS order wins when two share a match text.
        self.commands: dict[str, str] = {}
        for name in reversed(COMMANDS):
            cmd = flow.commands.get(name)
            if cmd is not None:
                for text in cmd.match:
                    self.commands[text.strip().lower()] = name
        self.states: dict[str, StatePlan] = {}
        for state in flow.states:
            if state.id in self.states:
                continue
            plan = StatePlan(state, tuple(_compile_message(m.text, m.buttons) for m in state.say))
            own = set(reminder_payloads)
            for message in state.say:
                own |= _payloads(message.buttons)
            plan.own_payloads = frozenset(own)
            self.states[state.id] = plan
        for tr in flow.transitions:
            plan = self.states.get(tr.source)
            # A transition into a missing state is a validation issue; it simply never fires.
            if plan is None or tr.target not in self.states:
                continue
            if tr.on in ("text", "button", "attachment", "event"):
                matches = frozenset(m.strip().lower() for m in tr.match)
                rx = compile_pattern(tr.pattern) if tr.on == "text" and tr.pattern else None
                plan.matchers.append((tr.on, tr, matches, rx))
            elif tr.on == "input":
                plan.on_input.append(tr)
            elif tr.on == "invalid":
                plan.on_invalid.append(tr)
            elif tr.on == "else":
                plan.on_else.append(tr)
            elif tr.on == "timeout" and plan.timeout is None and tr.after is not None:
                plan.timeout = tr


def _payloads(rows: tuple[tuple[Button, ...], ...]) -> set[str]:
    return {b.payload for row in rows for b in row if b.payload is not None}


def _target(button: Button) -> tuple[str, str]:
    """What a press does, as the reply's button field and its value."""
    if button.payload is not None:
        return "payload", button.payload
    if button.request is not None:
        return "request", button.request
    return "url", button.url or ""


def _compile_message(text: str, rows: tuple[tuple[Button, ...], ...]) -> CompiledMessage:
    compiled_rows = tuple(
        tuple((compile_template(b.text), *_target(b)) for b in row)
        for row in rows)
    return compile_template(text), compiled_rows


# Identity-checked cache: Flow is neither hashable nor weak-referenceable (a slots dataclass).
_PLANS: dict[int, FlowPlan] = {}
_PLAN_LIMIT = 256


def plan(flow: Flow) -> FlowPlan:
    """The cached lookups for a flow, built on first use."""
    found = _PLANS.get(id(flow))
    if found is not None and found.flow is flow:
        return found
    return _build(flow)


def _build(flow: Flow) -> FlowPlan:
    built = FlowPlan(flow)
    if len(_PLANS) >= _PLAN_LIMIT:
        try:
            _PLANS.pop(next(iter(_PLANS)))  # oldest first: drafts come and go, published versions stay hot
        except (KeyError, RuntimeError, StopIteration):
            pass  # another thread evicted at the same time; the cache only has to stay bounded
    _PLANS[id(flow)] = built
    return built


def add_message(out: list[Reply], message: CompiledMessage, data: dict[str, Any]) -> None:
    """Render one message (text and button texts) and append it, split when it is too long."""
    compiled, rows = message
    text = render_capped(compiled, data, RENDER_LIMIT)
    buttons = [[{"text": render_capped(bt, data, BUTTON_TEXT_LIMIT), key: value} for bt, key, value in row]
               for row in rows] if rows else []
    if len(text) <= MESSAGE_LIMIT:
        out.append(Reply(text, buttons))
        return
    parts = split_text(text)
    for part in parts[:-1]:
        out.append(Reply(part, []))
    out.append(Reply(parts[-1], buttons))


def add_text(out: list[Reply], compiled: Compiled, data: dict[str, Any]) -> None:
    """Render a keyboard-less text (error, fallback, command reply) and append it."""
    text = render_capped(compiled, data, RENDER_LIMIT)
    if len(text) <= MESSAGE_LIMIT:
        out.append(Reply(text, []))
    else:
        out.extend(Reply(part, []) for part in split_text(text))


def add_state_messages(out: list[Reply], sp: StatePlan, data: dict[str, Any]) -> None:
    """Append a state's `say` messages."""
    static = sp.static
    if static is not None:
        for text in static:
            out.append(Reply(text, []))
        return
    for message in sp.messages:
        compiled, rows = message
        # Fast path: a short text without placeholders or keyboard needs no rendering.
        if not rows and compiled.__class__ is str and len(compiled) <= MESSAGE_LIMIT:
            out.append(Reply(compiled, []))  # type: ignore[arg-type]
        else:
            add_message(out, message, data)


def copy_session(s: Session) -> Session:
    """A private copy we may change (data and history copied, values shared)."""
    return Session(s.flow, s.version, s.state, dict(s.data), list(s.history), s.attempts,
                   s.started_at, s.updated_at, s.entered_at, s.reminded, s.timeout_held)


def active_copy(s: Session, now: float) -> Session:
    """A private copy after user activity: the idle clock restarts, held timers may fire again."""
    return Session(s.flow, s.version, s.state, dict(s.data), list(s.history), s.attempts,
                   s.started_at, now, s.entered_at, False, False)


def first_holding(transitions: list[Transition], data: dict[str, Any]) -> Transition | None:
    """The first transition whose `if` holds."""
    for tr in transitions:
        if not tr.conditions or holds(tr.conditions, data):
            return tr
    return None


def fire(fp: FlowPlan, s: Session, tr: Transition, now: float, replies: list[Reply],
         effects: list[Effect]) -> Session | None:
    """Fire `tr` on the private session `s`; None when the target is final (the dialog ended)."""
    if tr.set:
        before = s.data
        # A value longer than the data may hold is cut just past the bound: the update is refused anyway.
        rendered = [(key, render_capped(compile_template(value), before, MAX_DATA_BYTES) if isinstance(value, str)
                     else value) for key, value in tr.set]
        for key, value in rendered:
            before[key] = value
    if tr.target != s.state:
        history = s.history
        history.append(s.state)
        if len(history) > HISTORY_LIMIT:
            del history[:len(history) - HISTORY_LIMIT]
    target = fp.states[tr.target]
    s.state = tr.target
    s.entered_at = now
    s.attempts = 0
    s.timeout_held = False
    add_state_messages(replies, target, s.data)
    for action in tr.actions:
        if action.type == "webhook" and action.url:
            effects.append(Effect("webhook", action.url, dict(s.data)))
        elif action.type == "clear":
            s.data = {}
    return None if target.state.final else s


def new_session(latest: Flow, state_id: str, data: dict[str, Any], now: float) -> Session:
    """A fresh dialog on the flow the bot serves now."""
    return Session(latest.id, latest.version, state_id, data, [], 0, now, now, now, False, False)
