"""Global commands (cancel, restart, back, help), `bot_started`, and opening a dialog."""
from __future__ import annotations

from typing import Any

from flows.firing import FlowPlan, active_copy, add_state_messages, add_text, new_dialog, plan
from flows.model import Flow
from flows.dialog import Dialog, Reply, StepResult, Update, replace
from flows.events import DialogEnded, DialogOpened, Event, WentBack
from flows.templates import compile_template

_EMPTY: dict[str, Any] = {}


def _ended(how: str, dialog: Dialog, now: float) -> DialogEnded:
    """The running dialog ended by a command, after the time it spent in its state."""
    return DialogEnded(how, dialog.state, now - dialog.entered_at)


def _reply_of(flow: Flow, name: str) -> str | None:
    cmd = flow.command(name)
    return cmd.reply if cmd is not None else None


def open_dialog(latest: Flow, data: dict[str, Any], now: float, replies: list[Reply], outcome: str,
                reason: str, events: list[Event] | None = None) -> StepResult:
    """Start a new dialog at `start` of the flow the bot serves now and send its messages."""
    if events is None:
        events = []
    lp = plan(latest)
    sp = lp.states.get(latest.start)
    if sp is None:
        add_text(replies, lp.fallback, data)
        return StepResult(None, replies, events, None,
                          f"{reason} but the start state {latest.start!r} does not exist; nothing opened.",
                          "fallback", touched=False)
    s = new_dialog(latest, latest.start, data, now)
    add_state_messages(replies, sp, data)
    if sp.state.final:
        events.append(DialogEnded("completed", latest.start))
        return StepResult(None, replies, events, None,
                          f"{reason}; the start state {latest.start} is final, so the dialog ended at once.",
                          "completed", s)
    events.append(DialogOpened(s.flow, s.version, s.state, s.language))
    return StepResult(s, replies, events, None, f"{reason}; the dialog is at {latest.start}.", outcome)


def started(flow: Flow, dialog: Dialog | None, update: Update, now: float, latest: Flow,
            note: str) -> StepResult:
    """`bot_started`: open a dialog, or restart the running one (even when `restart` is disabled)."""
    payload = update.start_payload
    data: dict[str, Any] = {"start_payload": payload} if payload not in (None, "") else {}
    with_payload = f' with payload "{payload}"' if data else ""
    if dialog is None:
        return open_dialog(latest, data, now, [], "opened", f"{note}The user started the bot{with_payload}")
    replies: list[Reply] = []
    reply = _reply_of(flow, "restart")
    if reply:
        add_text(replies, compile_template(reply), dialog.data)
    return open_dialog(latest, data, now, replies, "command:restart",
                       f"{note}The user started the bot{with_payload} during a dialog, which restarts it",
                       [_ended("restart", dialog, now)])


def run(name: str, flow: Flow, fp: FlowPlan, dialog: Dialog | None, update: Update, now: float,
        latest: Flow, note: str) -> StepResult:
    """Carry out a matched global command; its reply renders against the data before the command."""
    said = update.text if update.kind == "message" else update.payload
    what = f'{note}"{(said or "").strip()}" is the {name} command'
    data = dialog.data if dialog is not None else _EMPTY
    reply = _reply_of(flow if dialog is not None else latest, name)
    replies: list[Reply] = []
    if name == "cancel":
        if reply:
            add_text(replies, compile_template(reply), data)
        if dialog is None:
            return StepResult(None, replies, [], None, f"{what}; there was no dialog to cancel.",
                              "command:cancel", touched=False)
        return StepResult(None, replies, [_ended("cancel", dialog, now)], None,
                          f"{what}; the dialog at {dialog.state} was dropped.", "command:cancel")
    if name == "help":
        if reply:
            add_text(replies, compile_template(reply), data)
        if dialog is None:
            return StepResult(None, replies, [], None, f"{what}; no dialog is open.", "command:help",
                              touched=False)
        s = active_copy(dialog, now)
        return StepResult(s, replies, [], None, f"{what}; the dialog stays at {s.state}.", "command:help")
    if name == "restart":
        if reply:
            add_text(replies, compile_template(reply), data)
        return open_dialog(latest, {}, now, replies, "command:restart", f"{what}, which starts a new dialog",
                           [_ended("restart", dialog, now)] if dialog is not None else None)
    # back
    if dialog is None:
        if latest.settings.start_on == "command":
            add_text(replies, plan(latest).fallback, _EMPTY)
            return StepResult(None, replies, [], None,
                              f"{what}, but there is no dialog and dialogs start only on a command; "
                              "fallback sent.", "fallback", touched=False)
        if reply:
            add_text(replies, compile_template(reply), data)
        return open_dialog(latest, {}, now, replies, "command:back", f"{what} with no dialog, which opens one")
    if reply:
        add_text(replies, compile_template(reply), data)
    s = active_copy(dialog, now)
    while s.history:
        previous = s.history.pop()
        sp = fp.states.get(previous)
        if sp is not None and not sp.state.final:
            s = replace(s, state=previous, entered_at=now, attempts=0)
            add_state_messages(replies, sp, s.data)
            went = WentBack(dialog.state, previous, now - dialog.entered_at)
            return StepResult(s, replies, [went], None, f"{what}; back from {dialog.state} to {previous}.",
                              "command:back")
    add_state_messages(replies, fp.states[s.state], s.data)
    return StepResult(s, replies, [], None,
                      f"{what}; {s.state} has no earlier step, so its messages are sent again.", "command:back")
