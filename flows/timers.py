"""Clocks of a dialog: session expiry, the idle reminder and `timeout` transitions."""
from __future__ import annotations

from flows.conditions import holds
from flows.firing import add_message, copy_dialog, fire, plan
from flows.model import Flow
from flows.dialog import Dialog, Reply, StepResult
from flows.events import Event
from flows.templates import value_text


def idle_text(seconds: float) -> str:
    """A measured idle span as the engine's explanations say it: whole seconds (the clock's jitter is noise)."""
    return str(max(0, round(seconds)))


def expires_at(flow: Flow, dialog: Dialog) -> float:
    """When the dialog expires: `session_ttl` after the last activity."""
    return dialog.updated_at + flow.settings.session_ttl


def expired(flow: Flow, dialog: Dialog, now: float) -> bool:
    """Whether the dialog has been idle for `session_ttl` seconds or more at `now`."""
    return now >= dialog.updated_at + flow.settings.session_ttl


def reminder_at(flow: Flow, dialog: Dialog) -> float | None:
    """When the reminder of this idle spell is due, or None (none configured, already sent, final)."""
    reminder = flow.settings.reminder
    if reminder is None or dialog.reminded:
        return None
    state = flow.state(dialog.state)
    if state is None or state.final:
        return None
    return dialog.updated_at + reminder.after


def idle_since(dialog: Dialog) -> float:
    """Where a `timeout` counts from: entering the state, or the last update that reached the dialog since."""
    return max(dialog.entered_at, dialog.updated_at)


def timeout_at(flow: Flow, dialog: Dialog) -> float | None:
    """When the current state's `timeout` transition is due, or None (none, or held until activity)."""
    if dialog.timeout_held:
        return None
    sp = plan(flow).states.get(dialog.state)
    if sp is None or sp.timeout is None:
        return None
    return idle_since(dialog) + float(sp.timeout.after or 0)


def timer_at(flow: Flow, dialog: Dialog) -> float | None:
    """When the dialog's reminder or timeout is due; expiry needs no timer (the store's TTL drops it)."""
    remind, timeout = reminder_at(flow, dialog), timeout_at(flow, dialog)
    if remind is None:
        return timeout
    return remind if timeout is None or remind < timeout else timeout


def next_due(flow: Flow, dialog: Dialog | None) -> float | None:
    """The earliest time a reminder, a timeout or the expiry of this dialog is due (may be past)."""
    if dialog is None:
        return None
    due = expires_at(flow, dialog)
    for when in (reminder_at(flow, dialog), timeout_at(flow, dialog)):
        if when is not None and when < due:
            due = when
    return due


def tick(flow: Flow, dialog: Dialog, now: float) -> StepResult:
    """Fire what is due at `now` in a live (not expired) dialog; a tick is not activity."""
    fp = plan(flow)
    sp = fp.states[dialog.state]
    remind_when = reminder_at(flow, dialog)
    reminder_due = remind_when is not None and now >= remind_when
    held = False
    tr = sp.timeout
    if tr is not None and not dialog.timeout_held and now >= idle_since(dialog) + float(tr.after or 0):
        if not tr.conditions or holds(tr.conditions, dialog.data):
            # due together: only the timeout fires, this spell's reminder is spent
            s = copy_dialog(dialog, reminded=dialog.reminded or reminder_due)
            replies: list[Reply] = []
            events: list[Event] = []
            after, ended = fire(fp, s, tr, now, replies, events)
            reason = (f"The dialog stayed {value_text(float(tr.after or 0))} s in {dialog.state}; "
                      f"timeout transition {tr.id} fired")
            if ended:
                return StepResult(None, replies, events, tr.id,
                                  f"{reason} and reached the final state {tr.target}.", "completed", after,
                                  touched=False)
            return StepResult(after, replies, events, tr.id, reason + ".", "transition", touched=False)
        held = True
    if reminder_due:
        s = copy_dialog(dialog, reminded=True, timeout_held=dialog.timeout_held or held)
        replies = []
        add_message(replies, fp.reminder, s.data)  # type: ignore[arg-type]
        reason = f"The user has been idle in {dialog.state} for {idle_text(now - dialog.updated_at)} s; reminder sent."
        if held:
            reason += f" Timeout {tr.id} is due but its condition does not hold."  # type: ignore[union-attr]
        return StepResult(s, replies, [], None, reason, "reminder", touched=False)
    if held:
        s = copy_dialog(dialog, timeout_held=True)
        return StepResult(s, [], [], None,
                          f"Timeout {tr.id} is due but its condition does not hold; "  # type: ignore[union-attr]
                          "it waits for the next activity.", "held", touched=False)
    return StepResult(dialog, [], [], None, "Nothing is due yet.", "ignored", touched=False)
