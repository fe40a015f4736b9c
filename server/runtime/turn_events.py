"""A turn's events folded into its commit: one small handler per event kind (mailroom's hooks are the model).

`flows.engine.step` says what the turn did (`flows.events`); each handler adds its part to the turn's
`TurnCommit`: a message becomes a queued send, an action a queued webhook call, the timer the dialog's wake
time and key expiry, fires, openings and endings the funnel's counter fields. A new per-turn effect is a
new event and one handler here (and, where a store keeps it apart, its field in the commit).
"""
from __future__ import annotations

import math
from typing import Any, Callable

from flows.dialog import Dialog, Reply
from flows.events import (
    ActionQueued, DialogEnded, DialogOpened, Event, MessageSent, TimerSet, TransitionFired, WentBack,
)
from server.runtime.funnel_counts import Counts, bucket, group
from server.runtime.stores.base import TurnCommit, new_token

# Ten years: longer than any dialog is kept in practice, far inside what every store accepts as a TTL.
MAX_KEY_TTL = 10 * 365 * 24 * 3600.0
# How a command's ending of a dialog is counted (`funnel_counts`): cancel and restart.
_ENDED_BY = {"cancel": "c", "restart": "r"}


class Fold:
    """One turn's commit being made, with what its handlers need to know besides the events."""

    __slots__ = ("commit", "bot", "user", "chat", "now", "live", "counts", "restarted")

    def __init__(self, commit: TurnCommit, bot: str, user: str, chat: int | None, now: float, live: Dialog | None,
                 counts: Counts | None) -> None:
        self.commit, self.bot, self.user, self.chat, self.now = commit, bot, user, chat, now
        self.live = live  # the dialog the turn found, None when there was none or it had expired
        self.counts = counts  # the funnel's increments, None when nothing is counted
        self.restarted = False  # the live dialog was ended by a restart (a new one opens next)


def send_item(reply: Reply, user: str, chat: int | None, now: float) -> dict[str, Any]:
    """One reply as a queued send: to `chat`, the dialog the update came from, or else the user's own."""
    item = {"id": new_token(), "op": "send", "chat_id": chat, "user_id": int(user) if chat is None else None,
            "text": reply.text, "buttons": reply.buttons, "queued": now}
    if reply.format is not None or reply.image is not None or reply.upload is not None:
        item.update(format=reply.format, image=reply.image, upload=reply.upload)
    return item


def _message(event: MessageSent, fold: Fold) -> None:
    fold.commit.outbox.append(send_item(event.reply, fold.user, fold.chat, fold.now))


def _action(event: ActionQueued, fold: Fold) -> None:
    fold.commit.actions.append({"id": new_token(), "bot": fold.bot, "user": fold.user, "url": event.url,
                                "data": event.data, "created": fold.now, "attempts": 0})


def _timer(event: TimerSet, fold: Fold) -> None:
    commit = fold.commit
    # session_ttl has no upper bound; stores (Redis EX) take at most a 64-bit count of seconds.
    commit.ttl = max(1, math.ceil(min(event.expires - fold.now, MAX_KEY_TTL)))
    commit.timer_due = event.due
    if commit.dialog is not None:
        commit.dialog["due"] = event.due


def _live_group(fold: Fold) -> str | None:
    """The counter group of the dialog the turn found; None when nothing is counted for it."""
    live = fold.live
    if fold.counts is None or live is None:
        return None
    return group(live.flow, live.version, fold.now, live.language)


def _fired(event: TransitionFired, fold: Fold) -> None:
    g = _live_group(fold)
    if g is not None:
        spent = "s" if event.target == event.source else bucket(event.spent)
        fold.counts.pairs.append((g, f"f:{event.id}:{spent}"))  # type: ignore[union-attr]


def _opened(event: DialogOpened, fold: Fold) -> None:
    # A dialog opened where one was found live counts only as a restart (whose ending came first).
    if fold.counts is not None and (fold.live is None or fold.restarted):
        fold.counts.pairs.append((group(event.flow, event.version, fold.now, event.language), f"e:{event.state}"))


def _ended(event: DialogEnded, fold: Fold) -> None:
    code = _ENDED_BY.get(event.how)  # a completion is read from the fire into the final state
    g = _live_group(fold) if code is not None else None
    if g is not None:
        fold.counts.pairs.append((g, f"{code}:{event.state}:{bucket(event.spent)}"))  # type: ignore[union-attr]
        fold.restarted = event.how == "restart"


def _back(event: WentBack, fold: Fold) -> None:
    g = _live_group(fold)
    if g is not None and event.target != event.source:
        pairs = fold.counts.pairs  # type: ignore[union-attr]
        pairs.append((g, f"b:{event.source}:{bucket(event.spent)}"))
        pairs.append((g, f"e:{event.target}"))


# Events without a handler (InputSaved) change nothing the commit saves beyond the dialog itself.
HANDLERS: dict[type[Event], Callable[[Any, Fold], None]] = {
    MessageSent: _message, ActionQueued: _action, TimerSet: _timer, TransitionFired: _fired,
    DialogOpened: _opened, DialogEnded: _ended, WentBack: _back,
}


def fold(events: list[Event], into: Fold) -> None:
    """Add each event's part to the turn's commit, in order."""
    handlers = HANDLERS
    for event in events:
        handler = handlers.get(event.__class__)
        if handler is not None:
            handler(event, into)
