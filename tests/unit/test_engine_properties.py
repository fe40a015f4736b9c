"""Properties of step() over random valid flows and random update sequences."""
from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_strategies import update_sequences
from flows.engine import step
from flows.load import load
from flows.model import HISTORY_LIMIT
from flows.dialog import Update
from flows.timers import next_due
from strategies import flow_documents

OUTCOMES = {"opened", "transition", "input_invalid", "fallback", "ignored", "reminder", "completed",
            "expired", "held", "command:cancel", "command:restart", "command:back", "command:help"}


@st.composite
def flows_and_updates(draw: st.DrawFn):
    """One random flow and several dialogs on it (flows are costly to draw, dialogs are cheap)."""
    doc = draw(flow_documents())
    # A final start ends every dialog at once; keep most starts waiting so dialogs get somewhere.
    if draw(st.integers(0, 3)):
        for state in doc["states"]:
            if state["id"] == doc["start"]:
                state.pop("final", None)
    return doc, draw(st.lists(update_sequences(doc), min_size=1, max_size=4))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flows_and_updates())
def test_random_dialogs_keep_their_invariants(case):
    doc, dialogs = case
    flow = load(copy.deepcopy(doc))
    for updates in dialogs:
        _check_dialog(flow, updates)


def _check_dialog(flow, updates):
    session = None
    now = 1000.0
    visited: set[str] = set()
    for wait, update in updates:
        now += wait
        before = session.to_dict() if session is not None else None
        result = step(flow, session, update, now)
        if session is not None:
            assert session.to_dict() == before, "step() changed its input session"
        assert result.reason, "every result says why"
        assert result.outcome in OUTCOMES
        if result.transition is not None:
            assert any(t.id == result.transition for t in flow.transitions)
        for reply in result.replies:
            assert isinstance(reply.text, str) and len(reply.text) <= 4000
        if result.outcome == "ignored" and session is not None and result.dialog is not None:
            assert result.dialog.to_dict() == before, "an ignored update changes nothing"
        session = result.dialog
        if session is None:
            visited = set()
            continue
        state = flow.state(session.state)
        assert state is not None, "the session's state exists in the flow"
        assert not state.final, "a final state ends the dialog"
        if result.outcome in ("opened", "command:restart"):
            visited = set()
            assert session.history == []
        visited.add(session.state)
        assert len(session.history) <= HISTORY_LIMIT
        assert set(session.history) <= visited, "history holds only states this dialog visited"
        assert all(flow.has_state(s) for s in session.history)
        if session.history:
            assert session.history[-1] != session.state
        if next_due(flow, session) is not None:
            assert next_due(flow, session) <= session.updated_at + flow.settings.session_ttl


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flows_and_updates())
def test_back_never_goes_past_the_start(case):
    doc, dialogs = case
    doc = copy.deepcopy(doc)
    doc["commands"] = {"back": {"match": ["back"]}}
    flow = load(doc)
    for updates in dialogs:
        _back_to_start(flow, updates)


def _back_to_start(flow, updates):
    session = None
    now = 1000.0
    for wait, update in updates:
        now += wait
        session = step(flow, session, update, now).dialog
        if session is None:
            continue
        depth = len(session.history)
        for _ in range(depth + 2):
            result = step(flow, session, Update.message("back"), now)
            assert result.dialog is not None
            session = result.dialog
        assert session.history == []
        # Every dialog opens at start, so the bottom of its history is start.
        assert session.state == flow.start


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flows_and_updates())
def test_same_inputs_give_the_same_result(case):
    doc, dialogs = case
    flow = load(copy.deepcopy(doc))
    other = load(copy.deepcopy(doc))
    a = b = None
    now = 1000.0
    for wait, update in [pair for updates in dialogs for pair in updates]:
        now += wait
        ra = step(flow, a, update, now)
        rb = step(other, b, update, now)
        assert [r.to_dict() for r in ra.replies] == [r.to_dict() for r in rb.replies]
        assert (ra.transition, ra.outcome, ra.reason) == (rb.transition, rb.outcome, rb.reason)
        a, b = ra.dialog, rb.dialog
        assert (a.to_dict() if a else None) == (b.to_dict() if b else None)
