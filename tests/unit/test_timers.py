"""Reminders, timeouts and session expiry, driven by tick updates at chosen times."""
from __future__ import annotations

from engine_strategies import Talk, flow_of, texts
from flows.engine import catch_up, step
from flows.dialog import Update
from flows.timers import expired, next_due

WAIT = {"id": "wait", "say": [{"text": "Ждём оплату"}], "input": {"type": "any", "save_as": "note"}}
LATE = {"id": "late", "say": [{"text": "Время вышло"}]}
REMINDER = {"after": 100, "text": "Вы здесь, {name}?", "buttons": [[{"text": "Да", "payload": "here"}]]}


def timed(timeout_after=None, cond=None, reminder=REMINDER, ttl=1000):
    trs = []
    if timeout_after is not None:
        tr = {"id": "too_late", "from": "wait", "to": "late", "on": "timeout", "after": timeout_after}
        if cond:
            tr["if"] = cond
        trs.append(tr)
    settings = {"session_ttl": ttl}
    if reminder:
        settings["reminder"] = reminder
    return flow_of([WAIT, LATE], trs, settings=settings)


def at(d: Talk, when: float):
    """A tick at absolute time `when`."""
    d.now = when
    before = d.dialog
    r = step(d.flow, before, Update.tick(), when)
    d.dialog, d.last = r.dialog, r
    return r


def opened(flow, now=0.0):
    d = Talk(flow, now=now - 1)
    d.send("hi")
    assert d.now == now
    return d


def test_reminder_fires_once_per_idle_spell_and_a_tick_is_not_activity():
    d = opened(timed())
    d.dialog.data["name"] = "Иван"
    assert at(d, 99).outcome == "ignored"
    r = at(d, 100)
    assert r.outcome == "reminder"
    assert texts(r) == ["Вы здесь, Иван?"]
    assert r.replies[0].buttons == [[{"text": "Да", "payload": "here"}]]
    assert r.touched is False
    assert d.dialog.updated_at == 0  # the idle clock did not restart
    assert at(d, 150).outcome == "ignored"
    # activity starts a new idle spell
    d.now = 200
    d.send("тут", wait=0)
    assert d.dialog.reminded is False
    assert at(d, 299).outcome == "ignored"
    assert at(d, 300).outcome == "reminder"


def test_no_reminder_configured_means_nothing_fires():
    d = opened(timed(reminder=None))
    assert at(d, 500).outcome == "ignored"


def test_timeout_counts_from_entering_the_state_and_sends_the_target():
    d = opened(timed(timeout_after=60, reminder=None))
    assert next_due(d.flow, d.dialog) == 60
    assert at(d, 59).outcome == "ignored"
    r = at(d, 60)
    assert r.transition == "too_late"
    assert texts(r) == ["Время вышло"]
    assert d.state == "late"
    assert d.dialog.entered_at == 60
    assert d.dialog.history == ["wait"]


def test_timeout_counts_idle_time_so_every_update_that_reaches_the_dialog_restarts_it():
    flow = timed(timeout_after=60, reminder=None)
    flow = flow_of([WAIT, LATE], [*flow.document["transitions"],
                                  {"id": "paid", "from": "wait", "to": "late", "on": "event", "name": "paid",
                                   "if": [{"var": "amount", "op": "ge", "value": 100}]}],
                   settings={"session_ttl": 1000}, commands={"help": {"match": ["/help"], "reply": "Ждём"}})
    d = opened(flow)
    d.now = 30
    d.send("сообщение", wait=0)  # input that keeps the dialog in its state
    assert next_due(d.flow, d.dialog) == 90
    d.now = 50
    d.send("/help", wait=0)  # a command that keeps the dialog
    assert next_due(d.flow, d.dialog) == 110
    ignored = step(d.flow, d.dialog, Update.event("shipped"), 70)  # an event nobody takes
    assert ignored.outcome == "ignored" and next_due(d.flow, ignored.dialog) == 110
    assert at(d, 109).outcome == "ignored"
    assert at(d, 110).transition == "too_late"


def test_timeout_with_false_condition_waits_for_the_next_activity():
    d = opened(timed(timeout_after=60, cond=[{"var": "note", "op": "set"}], reminder=None))
    r = at(d, 60)
    assert r.transition is None
    assert d.dialog.timeout_held is True
    assert next_due(d.flow, d.dialog) == 1000  # only the expiry is left
    assert at(d, 70).transition is None
    d.now = 80
    d.send("оплачу позже", wait=0)  # saves `note`; the timeout may fire again, after 60 s more of idling
    assert d.dialog.timeout_held is False
    assert next_due(d.flow, d.dialog) == 140
    assert at(d, 139).transition is None
    r = at(d, 140)
    assert r.transition == "too_late"


def test_held_timeout_stays_held_while_nothing_happens_even_if_condition_turns_true():
    d = opened(timed(timeout_after=60, cond=[{"var": "paid", "op": "unset"}], reminder=None))
    d.dialog.data["paid"] = "yes"
    at(d, 60)
    assert d.dialog.timeout_held
    del d.dialog.data["paid"]
    assert at(d, 90).transition is None


def test_reminder_and_timeout_due_together_only_the_timeout_fires():
    flow = flow_of([WAIT, {"id": "late", "say": [{"text": "Время вышло"}], "input": {"type": "any"}}],
                   [{"id": "too_late", "from": "wait", "to": "late", "on": "timeout", "after": 100}],
                   settings={"session_ttl": 1000, "reminder": REMINDER})
    d = opened(flow)
    r = at(d, 101)
    assert r.transition == "too_late"
    assert texts(r) == ["Время вышло"]
    assert at(d, 102).outcome == "ignored"  # the reminder of this idle spell is spent


def test_reminder_fires_when_the_timeout_is_held():
    d = opened(timed(timeout_after=100, cond=[{"var": "x", "op": "set"}]))
    r = at(d, 100)
    assert r.outcome == "reminder"
    assert d.dialog.timeout_held and d.dialog.reminded


def test_next_due_is_the_earliest_of_reminder_timeout_and_expiry():
    d = opened(timed(timeout_after=60))
    assert next_due(d.flow, d.dialog) == 60
    d = opened(timed(timeout_after=500))
    assert next_due(d.flow, d.dialog) == 100
    at(d, 100)
    assert next_due(d.flow, d.dialog) == 500
    d = opened(timed(reminder=None))
    assert next_due(d.flow, d.dialog) == 1000
    assert next_due(d.flow, None) is None


def test_session_ttl_counts_from_last_activity():
    d = opened(timed(reminder=None, ttl=300))
    d.now = 200
    d.send("x", wait=0)
    assert not expired(d.flow, d.dialog, 499)
    assert expired(d.flow, d.dialog, 500)
    r = at(d, 500)
    assert r.outcome == "expired" and r.dialog is None


def test_message_to_an_expired_dialog_opens_a_new_one():
    d = opened(timed(reminder=None, ttl=300))
    d.send("note")
    r = d.send("hi", wait=400)
    assert r.outcome == "opened"
    assert d.data == {}


def test_ignored_event_does_not_restart_the_idle_clock():
    d = opened(timed(reminder=None, ttl=300))
    r = d.send(Update.event("nobody_listens"), wait=250)
    assert r.outcome == "ignored"
    assert d.dialog.updated_at == 0
    assert at(d, 300).outcome == "expired"


def test_tick_without_dialog_is_ignored():
    r = step(timed(), None, Update.tick(), 5.0)
    assert r.dialog is None and r.outcome == "ignored" and r.replies == []


def test_timeout_into_a_final_state_completes_the_dialog():
    flow = flow_of([WAIT, {"id": "late", "final": True, "say": [{"text": "Отменено"}]}],
                   [{"id": "too_late", "from": "wait", "to": "late", "on": "timeout", "after": 10,
                     "actions": [{"type": "webhook", "url": "https://crm.example/late"}]}])
    d = opened(flow)
    r = at(d, 10)
    assert r.outcome == "completed" and r.dialog is None
    assert r.completed.state == "late"
    assert [e.url for e in r.effects] == ["https://crm.example/late"]


def test_catch_up_fires_each_timer_at_its_own_due_time():
    flow = flow_of([WAIT, {"id": "late", "say": [{"text": "Время вышло"}], "input": {"type": "any"}}],
                   [{"id": "too_late", "from": "wait", "to": "late", "on": "timeout", "after": 300}],
                   settings={"session_ttl": 1000, "reminder": REMINDER})
    d = opened(flow)
    results = catch_up(flow, d.dialog, 5000)
    assert [r.outcome for r in results] == ["reminder", "transition", "expired"]
    assert results[1].dialog.entered_at == 300
    assert results[-1].dialog is None
    assert catch_up(flow, d.dialog, 99) == []
    assert catch_up(flow, None, 5000) == []


def test_due_time_from_next_due_is_due_for_step_despite_float_rounding():
    flow = timed(reminder=None, ttl=1)
    d = opened(flow, now=0.4)
    when = next_due(flow, d.dialog)
    assert when - 0.4 < 1  # the rounding this guards against
    assert step(flow, d.dialog, Update.tick(), when).outcome == "expired"


def test_explanations_give_a_measured_idle_span_in_whole_seconds():
    d = opened(timed(ttl=300))
    assert at(d, 100.0808427333832).reason == "The user has been idle in wait for 100 s; reminder sent."
    assert "was idle for 301 s, past session_ttl" in at(d, 300.6).reason
