"""`step`: one incoming update applied to one dialog, as a pure function."""
from __future__ import annotations

from typing import Any

from flows import commands, inputs, timers
from flows.build import localized
from flows.languages import choose
from flows.conditions import holds
from flows.firing import (_PLANS, FlowPlan, StatePlan, active_copy, add_state_messages, add_text, copy_dialog,
                          fire, first_holding, plan)
from flows.limits import MAX_DATA_BYTES, MAX_REPLIES, data_bytes, data_fits
from flows.model import Flow, Input, Transition
from flows.patterns import occurs
from flows.dialog import Dialog, Reply, StepResult, Update, replace
from flows.events import Event, InputSaved, MessageSent, TimerSet

__all__ = ["step", "catch_up", "next_due", "expired"]
next_due = timers.next_due
expired = timers.expired


def step(flow: Flow, dialog: Dialog | None, update: Update, now: float, *,
         latest: Flow | None = None) -> StepResult:
    """Apply one update at time `now` to a dialog on `flow` (None: no dialog) and say what happened.

    Never changes `dialog`; the returned dialog is a new object unless nothing changed
    (outcome "ignored"). `latest` is the flow the bot serves now, used when a dialog (re)opens.
    """
    # The result keeps the limits: data that would grow past MAX_DATA_BYTES refuses the update as
    # invalid input, and at most MAX_REPLIES messages are sent (the rest counted in `dropped`).
    result = _step(flow, dialog, update, now, latest)
    after = result.dialog or result.completed
    if after is not None and _grown(after.data, dialog) and not data_fits(after.data):
        if dialog is None or data_bytes(after.data) > data_bytes(dialog.data):
            result = _too_much_data(flow, dialog, update, now)
    replies = result.replies
    if len(replies) > MAX_REPLIES:
        result.dropped = len(replies) - MAX_REPLIES
        del replies[MAX_REPLIES:]
        result.reason += (f" {result.dropped} further message{'s were' if result.dropped > 1 else ' was'} dropped:"
                          f" one update sends at most {MAX_REPLIES}.")
    events = result.events
    for reply in replies:
        events.append(MessageSent(reply))
    running = result.dialog
    if running is not None:  # the dialog runs on: when to look at it next, and when it expires
        runs_on = flow
        if latest is not None and (running.flow, running.version) == (latest.id, latest.version):
            runs_on = latest
        events.append(TimerSet(timers.timer_at(runs_on, running), running.updated_at + runs_on.settings.session_ttl))
    return result


def _grown(data: dict[str, Any], before: Dialog | None) -> bool:
    """Whether the data may have grown: unchanged data (compared in C, values mostly shared) has not."""
    if before is None:
        return True
    try:
        return data != before.data
    except RecursionError:  # values nested too deeply to compare: let the size check decide
        return True


def _too_much_data(flow: Flow, dialog: Dialog | None, update: Update, now: float) -> StepResult:
    """The update would grow the dialog's data past the limit: refused like an invalid input."""
    why = (f"{_said(update)} would grow the dialog's data past {MAX_DATA_BYTES // 1024} KiB; treated as invalid"
           " input, nothing else changed.")
    if dialog is not None and dialog.language is not None:
        flow = localized(flow, dialog.language)
    fp = plan(flow)
    if dialog is None or dialog.state not in fp.states:
        if update.kind == "tick":
            return StepResult(dialog, [], [], None, why, "ignored", touched=False)
        replies: list[Reply] = []
        add_text(replies, fp.fallback, {})
        return StepResult(None, replies, [], None, why, "input_invalid", touched=False)
    replies = []
    if update.kind == "tick":
        s = copy_dialog(dialog, timeout_held=True)  # the due timeout waits for the next activity instead
        return StepResult(s, replies, [], None, why, "held", touched=False)
    if update.kind == "event":  # nobody to answer: the event is not taken
        why = (f"{_said(update)} would grow the dialog's data past {MAX_DATA_BYTES // 1024} KiB, so it is not"
               " taken; nothing changed.")
        return StepResult(dialog, replies, [], None, why, "ignored", touched=False)
    s = active_copy(dialog, now)
    sp = fp.states[dialog.state]
    add_text(replies, sp.error if sp.error is not None else fp.fallback, s.data)
    return StepResult(s, replies, [], None, why, "input_invalid")


def _step(flow: Flow, dialog: Dialog | None, update: Update, now: float, latest: Flow | None) -> StepResult:
    if latest is None:
        latest = flow
    kind = update.kind
    note = ""
    fp = _PLANS.get(id(flow))
    if fp is None or fp.flow is not flow:
        fp = plan(flow)
    if dialog is not None:
        # Same expression as timers.expired/next_due, so a tick at the due time always sees it due.
        if now >= dialog.updated_at + flow.settings.session_ttl:
            if kind == "tick":
                return StepResult(None, [], [], None,
                                  f"The dialog at {dialog.state} was idle for "
                                  f"{timers.idle_text(now - dialog.updated_at)} s, past session_ttl; dropped.",
                                  "expired", touched=False)
            note = "The previous dialog had expired. "
            dialog = None
        elif dialog.state not in fp.states:
            note = f"The dialog's state {dialog.state!r} no longer exists. "
            dialog = None
    # A running dialog keeps its language; a dialog (re)opened now takes the update's `user_locale`.
    if dialog is not None and dialog.language is not None and dialog.language != flow.language:
        flow = localized(flow, dialog.language)
        fp = plan(flow)
    if kind == "tick":
        if dialog is None:
            return StepResult(None, [], [], None, note + "No dialog, nothing is due.", "ignored",
                              touched=False)
        return timers.tick(flow, dialog, now)
    # Only an update that may open a dialog needs the flow in the user's language.
    opening = dialog is None or kind == "bot_started"
    if opening and latest.languages:
        latest = localized(latest, choose(latest.languages, update.locale))
    if kind == "bot_started":
        return commands.started(flow, dialog, update, now, latest, note)
    if dialog is None and latest is not flow:
        fp = plan(latest)
    raw = update.text if kind == "message" else update.payload if kind == "button" else None
    name = fp.commands.get(raw.strip().lower()) if raw else None
    if name is not None:
        if not opening and latest.languages:  # restart and back open a new dialog
            latest = localized(latest, choose(latest.languages, update.locale))
        return commands.run(name, flow, fp, dialog, update, now, latest, note)
    if dialog is None:
        return _no_dialog(latest, fp, update, now, note)
    return _in_dialog(fp, dialog, update, now)


def catch_up(flow: Flow, dialog: Dialog | None, until: float, *, limit: int = 100) -> list[StepResult]:
    """Fire, in order and each at its own due time, everything due up to `until` (for idle jumps)."""
    results: list[StepResult] = []
    while dialog is not None and len(results) < limit:
        when = timers.next_due(flow, dialog)
        if when is None or when > until:
            break
        result = step(flow, dialog, Update.tick(), when)
        results.append(result)
        if result.outcome == "ignored":
            break
        dialog = result.dialog
    return results


def _no_dialog(latest: Flow, fp: FlowPlan, update: Update, now: float, note: str) -> StepResult:
    if update.kind == "event":
        return StepResult(None, [], [], None, f"{note}Event {update.name!r} arrived with no dialog; ignored.",
                          "ignored", touched=False)
    if update.kind not in ("message", "button"):
        return StepResult(None, [], [], None, f"{note}Update {update.kind!r} with no dialog; ignored.",
                          "ignored", touched=False)
    if latest.settings.start_on == "command":
        replies: list[Reply] = []
        add_text(replies, fp.fallback, {})
        return StepResult(None, replies, [], None,
                          f"{note}No dialog, and dialogs start only on a command; fallback sent.",
                          "fallback", touched=False)
    return commands.open_dialog(latest, {}, now, [], "opened", f"{note}A first message opened a dialog")


def _said(update: Update) -> str:
    if update.kind == "tick":
        return "The due timer"
    if update.kind == "bot_started":
        return "Starting the bot"
    if update.kind == "button":
        return f'The press "{update.payload}"'
    if update.kind == "event":
        return f"Event {update.name!r}"
    return f'Message "{inputs.shown(update.text, update.attachments)}"'


def _fired(fp: FlowPlan, s: Dialog, tr: Transition, now: float, replies: list[Reply], why: str,
           events: list[Event] | None = None) -> StepResult:
    if events is None:
        events = []
    source = s.state
    after, ended = fire(fp, s, tr, now, replies, events)
    if ended:
        return StepResult(None, replies, events, tr.id,
                          f"{why}; transition {tr.id} fired from {source} to the final state {tr.target}; "
                          "the dialog ended.", "completed", after)
    return StepResult(after, replies, events, tr.id, f"{why}; transition {tr.id} fired.", "transition")


def _matches(entry: tuple[str, Transition, frozenset[str], Any], update: Update, text: str | None) -> bool:
    on, tr, match_set, rx = entry
    if on == "button":
        return update.kind == "button" and update.payload == tr.payload
    if on == "text":
        return text is not None and (text.lower() in match_set or (rx is not None and occurs(rx, text)))
    if on == "attachment":
        if update.kind != "message":
            return False
        kinds = tr.kinds
        return any(not kinds or a.get("type") in kinds for a in update.attachments)
    return update.kind == "event" and update.name == tr.name


def _in_dialog(fp: FlowPlan, dialog: Dialog, update: Update, now: float) -> StepResult:
    sp = fp.states[dialog.state]
    kind = update.kind
    text = update.text.strip() if kind == "message" and update.text is not None else None
    merged: dict[str, Any] | None = None
    for entry in sp.matchers:
        if not _matches(entry, update, text):
            continue
        tr = entry[1]
        if kind == "event":
            if merged is None:
                merged = {**dialog.data, **update.event_payload}
            data = merged
        else:
            data = dialog.data
        if tr.conditions and not holds(tr.conditions, data):
            continue
        s = active_copy(dialog, now)
        if merged is not None:
            s = replace(s, data=merged)
        trigger = f"matched its {entry[0]} trigger"
        return _fired(fp, s, tr, now, [], f"{_said(update)} {trigger}")
    if kind == "event":
        return StepResult(dialog, [], [], None,
                          f"Event {update.name!r} is not taken by any transition from {dialog.state}; "
                          "nothing changed.", "ignored", touched=False)
    if kind not in ("message", "button"):
        return StepResult(dialog, [], [], None, f"Update {kind!r} is not handled; ignored.", "ignored",
                          touched=False)
    s = active_copy(dialog, now)
    if sp.input is not None:
        return _input(fp, sp, sp.input, s, update, now, text)
    taken = first_holding(sp.on_else, s.data)
    if taken is not None:
        return _fired(fp, s, taken, now, [], f"{_said(update)} was taken by the else transition")
    return _fallback(fp, sp, s, f"{_said(update)} matched nothing in {s.state}; fallback sent.")


def _fallback(fp: FlowPlan, sp: StatePlan, s: Dialog, reason: str, events: list[Event] | None = None) -> StepResult:
    replies: list[Reply] = []
    add_text(replies, fp.fallback, s.data)
    add_state_messages(replies, sp, s.data)
    return StepResult(s, replies, events if events is not None else [], None, reason, "fallback")


def _input(fp: FlowPlan, sp: StatePlan, inp: Input, s: Dialog, update: Update, now: float,
           text: str | None) -> StepResult:
    """Step 4: the message (or a press of the state's own button) is the state's input (`inp`, the state's)."""
    if update.kind == "button":
        if update.payload not in sp.own_payloads:
            return _fallback(fp, sp, s, f'The press "{update.payload}" is not a button of {s.state}; '
                                        "fallback sent.")
        text, attachments = update.payload, []
    else:
        attachments = update.attachments
    verdict = inputs.check(inp, text, attachments)
    quoted = f'Input "{inputs.shown(text, attachments)}"'
    if verdict.ok:
        if s.attempts:
            s = replace(s, attempts=0)
        events: list[Event] = []
        if inp.save_as:
            s.data[inp.save_as] = verdict.value
            events.append(InputSaved(inp.save_as, verdict.value))
        tr = first_holding(sp.on_input, s.data)
        if tr is not None:
            return _fired(fp, s, tr, now, [], f"{quoted} {verdict.why}", events)
        saved = f" and saved as {inp.save_as}" if inp.save_as else ""
        return _fallback(fp, sp, s, f"{quoted} {verdict.why}{saved}, but no input transition from "
                                    f"{s.state} holds; fallback sent.", events)
    attempts = s.attempts + 1
    s = replace(s, attempts=attempts)
    if inp.max_attempts and attempts >= inp.max_attempts:
        tr = first_holding(sp.on_invalid, s.data)
        if tr is not None:
            return _fired(fp, s, tr, now, [],
                          f"{quoted} {verdict.why}, invalid input {attempts} of {inp.max_attempts} in a row")
    replies: list[Reply] = []
    if sp.error is not None:
        add_text(replies, sp.error, s.data)
        sent = "error sent"
    else:
        add_text(replies, fp.fallback, s.data)
        sent = "fallback sent"
    counted = f" (invalid {attempts} in a row)" if attempts > 1 else ""
    return StepResult(s, replies, [], None, f"{quoted} {verdict.why}; {sent}{counted}.", "input_invalid")
