"""Per-flow lookups compiled once, rendering of a state's messages, and firing a transition."""
from __future__ import annotations

from typing import Any

from flows.build import localized
from flows.conditions import holds
from flows.limits import MAX_DATA_BYTES, RENDER_LIMIT
from flows.model import (BUTTON_TEXT_LIMIT, COMMANDS, HISTORY_LIMIT, MESSAGE_LIMIT, Button, Flow, Message, State,
                         Transition)
from flows.patterns import Pattern, compile_pattern
from flows.dialog import Dialog, Reply, replace
from flows.events import ActionQueued, DialogEnded, Event, TransitionFired
from flows.templates import Compiled, compile_template, render_capped, render_escaped, split_text

# How a message looks beyond its text: (format, image link, upload id); None for plain text alone.
Look = tuple[str | None, str | None, str | None] | None
# (compiled text, rows of (compiled button text, "payload"|"url"|"request", value), look)
CompiledMessage = tuple[Compiled, tuple[tuple[tuple[Compiled, str, str], ...], ...], Look]


class StatePlan:
    """Everything step() needs about one state, looked up once."""

    __slots__ = ("state", "messages", "static", "input", "error", "matchers", "on_input", "on_invalid",
                 "on_else", "timeout", "own_payloads")

    def __init__(self, state: State, messages: tuple[CompiledMessage, ...]) -> None:
        self.state = state
        self.messages = messages
        # Texts of messages that need no rendering (no placeholder, no keyboard, short), else None.
        static = [text for text, rows, look in messages
                  if not rows and look is None and isinstance(text, str) and len(text) <= MESSAGE_LIMIT]
        self.static: tuple[str, ...] | None = tuple(static) if len(static) == len(messages) else None
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
            plan = StatePlan(state, tuple(_compile_message(m.text, m.buttons, _look(m)) for m in state.say))
            own = set(reminder_payloads)
            for message in state.say:
                own |= _payloads(message.buttons)
            plan.own_payloads = frozenset(own)
            self.states[state.id] = plan
        for tr in flow.transitions:
            source = self.states.get(tr.source)
            # A transition into a missing state is a validation issue; it simply never fires.
            if source is None or tr.target not in self.states:
                continue
            plan = source
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


def _look(message: Message) -> Look:
    if message.format is None and message.image is None and message.upload is None:
        return None
    return message.format, message.image, message.upload


def _compile_message(text: str, rows: tuple[tuple[Button, ...], ...], look: Look = None) -> CompiledMessage:
    compiled_rows = tuple(
        tuple((compile_template(b.text), *_target(b)) for b in row)
        for row in rows)
    return compile_template(text), compiled_rows, look


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
    """Render one message (text and button texts) and append it, split when it is too long.

    With a markup format, inserted values are escaped for it; a picture goes with the first part, the
    keyboard with the last.
    """
    compiled, rows, look = message
    fmt, image, upload = look if look is not None else (None, None, None)
    text = render_capped(compiled, data, RENDER_LIMIT) if fmt is None else render_escaped(compiled, data, fmt)
    buttons = [[{"text": render_capped(bt, data, BUTTON_TEXT_LIMIT), key: value} for bt, key, value in row]
               for row in rows] if rows else []
    if len(text) <= MESSAGE_LIMIT:
        out.append(Reply(text, buttons, fmt, image, upload))
        return
    parts = split_text(text)
    out.append(Reply(parts[0], [] if len(parts) > 1 else buttons, fmt, image, upload))
    for part in parts[1:-1]:
        out.append(Reply(part, [], fmt))
    if len(parts) > 1:
        out.append(Reply(parts[-1], buttons, fmt))


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
        compiled, rows, look = message
        # Fast path: a short plain text without placeholders or keyboard needs no rendering.
        if not rows and look is None and compiled.__class__ is str and len(compiled) <= MESSAGE_LIMIT:
            out.append(Reply(compiled, []))
        else:
            add_message(out, message, data)


def copy_dialog(s: Dialog, **changes: Any) -> Dialog:
    """A private copy we may change (data and history copied, values shared), with `changes` made."""
    return replace(s, data=dict(s.data), history=list(s.history), **changes)


def active_copy(s: Dialog, now: float) -> Dialog:
    """A private copy after user activity: the idle clock restarts, held timers may fire again."""
    return Dialog(s.flow, s.version, s.state, dict(s.data), list(s.history), s.attempts,
                  s.started_at, now, s.entered_at, False, False, s.language)


def first_holding(transitions: list[Transition], data: dict[str, Any]) -> Transition | None:
    """The first transition whose `if` holds."""
    for tr in transitions:
        if not tr.conditions or holds(tr.conditions, data):
            return tr
    return None


def fire(fp: FlowPlan, s: Dialog, tr: Transition, now: float, replies: list[Reply],
         events: list[Event]) -> tuple[Dialog, bool]:
    """Fire `tr` on the private dialog `s` (its data and history are changed in place): the dialog after
    it, and whether the target is final (the dialog ended). What happened is added to `events`."""
    data = s.data
    if tr.set:
        # A value longer than the data may hold is cut just past the bound: the update is refused anyway.
        rendered = [(key, render_capped(compile_template(value), data, MAX_DATA_BYTES)) for key, value in tr.set]
        for key, value in rendered:
            data[key] = value
    language = s.language
    if tr.language is not None and tr.language != language:
        language = tr.language  # the target's messages, and all after them, in the chosen language
        fp = plan(localized(fp.flow, tr.language))
    if tr.target != s.state:
        history = s.history
        history.append(s.state)
        if len(history) > HISTORY_LIMIT:
            del history[:len(history) - HISTORY_LIMIT]
    target = fp.states[tr.target]
    events.append(TransitionFired(tr.id, s.state, tr.target, now - s.entered_at))
    add_state_messages(replies, target, data)
    for action in tr.actions:
        if action.type == "webhook" and action.url:
            events.append(ActionQueued(action.url, dict(data)))
        elif action.type == "clear":
            data = {}
    after = Dialog(s.flow, s.version, tr.target, data, s.history, 0, s.started_at, s.updated_at, now, s.reminded,
                   False, language)
    final = target.state.final
    if final:
        events.append(DialogEnded("completed", tr.target))
    return after, final


def new_dialog(latest: Flow, state_id: str, data: dict[str, Any], now: float) -> Dialog:
    """A fresh dialog on the flow the bot serves now."""
    return Dialog(latest.id, latest.version, state_id, data, [], 0, now, now, now, False, False, latest.language)
