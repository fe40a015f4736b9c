"""What one turn did, as typed events: `flows.engine.step` says them, the runtime folds them into its commit.

Each event is one fact the engine knew when it happened (RapidPro's goflow events are the model); the
runtime has one small handler per kind (`server.runtime.turn_effects`), so a new per-turn effect is a new
event and its handler, not a second reading of the dialog before and after.
"""
from __future__ import annotations

from typing import Any

import msgspec

from flows.dialog import Reply


class Event(msgspec.Struct, frozen=True, tag_field="event"):
    """One thing a turn did; `event` names its kind in JSON."""


class DialogOpened(Event, tag="dialog_opened", frozen=True):
    """A dialog started (a first message, Start, restart or back with no dialog) and runs at `state`."""

    flow: str
    version: int | None
    state: str
    language: str | None = None


class DialogEnded(Event, tag="dialog_ended", frozen=True):
    """The running dialog ended: `how` is "completed" (a final state), "cancel" or "restart"; `spent`
    the seconds it had been in `state`."""

    how: str
    state: str
    spent: float = 0.0


class MessageSent(Event, tag="message_sent", frozen=True):
    """One reply, in the order sent."""

    reply: Reply


class InputSaved(Event, tag="input_saved", frozen=True):
    """A valid input was saved into the dialog's data as `key`."""

    key: str
    value: Any


class TransitionFired(Event, tag="transition_fired", frozen=True):
    """Transition `id` fired from `source` to `target` after `spent` seconds in `source`."""

    id: str
    source: str
    target: str
    spent: float = 0.0


class WentBack(Event, tag="went_back", frozen=True):
    """The back command moved the dialog from `source` (after `spent` seconds there) to `target`."""

    source: str
    target: str
    spent: float = 0.0


class ActionQueued(Event, tag="action_queued", frozen=True):
    """A `webhook` action to call after the turn is saved, with the dialog's data at that moment."""

    url: str
    data: dict[str, Any]
    type: str = "webhook"


class TimerSet(Event, tag="timer_set", frozen=True):
    """The dialog runs on: its next reminder or timeout is due at `due` (None: none), and it expires at
    `expires` (session_ttl after its last activity)."""

    due: float | None
    expires: float
