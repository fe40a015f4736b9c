"""The Redis COMMIT script's arguments: one named, versioned MessagePack map (`lua/commit.lua` reads it).

Each field is read by its name, so a new per-turn effect adds a field here and its lines in the script,
never a shift of positions. Bytes travel as MessagePack strings and times as their exact text
(`script_args`); fields left at their default are left out, and the script reads them as nil.
"""
from __future__ import annotations

import msgspec

# Raised with every change the script must know of: a script and a caller of different versions refuse.
VERSION = 2


class CountArgs(msgspec.Struct, omit_defaults=True):
    """The turn's funnel counting (`funnel_counts.Counts`)."""

    hour: str  # the hour number the increments go to
    prefix: str  # the bot's counter key prefix
    keep: int  # counter key ttl, seconds
    prior_gone: bool = False  # the dialog it replaced had run out: counted as expired first
    info: str | None = None  # the expiry info to remember (None forgets it, "=" keeps it as it is)
    pairs: list[str] = []  # group, field, group, field...


class CommitArgs(msgspec.Struct, omit_defaults=True):
    """One turn's save; the dialog itself and the dialog as read travel beside it, as binary."""

    v: int  # VERSION: the script refuses a map of another
    token: str  # the lock's (and the outbox claim's) owner
    member: str  # the user in the shared sets (timers, outbox queue, expiry info)
    now: msgspec.Raw  # when the actions were queued: their first attempt is due at once
    claim_end: msgspec.Raw  # until when the outbox claim lasts unrenewed (a queue score)
    mark_ttl: int
    stream_max: int
    lock_ms: int
    ttl: int = 0  # seconds the saved dialog is kept
    mark: msgspec.Raw | None = None  # the delivery's duplicate mark
    wake: msgspec.Raw | None = None  # when to look at the dialog next (its timer, or its expiry)
    had_timer: bool = False  # a timer may be scheduled: unschedule it when no wake is given
    timeline: msgspec.Raw | None = None  # the timeline record, or its brief
    brief: bool = False  # `timeline` is a brief: its record takes the saved dialog as its snapshot
    rate_ms: float | None = None  # the bot's send spacing (None keeps no rate)
    unlocked: bool = False  # read without the lock: save only if nothing changed since
    unmark: bool = False  # the dialog was read with a turn mark, which this turn numbers itself past: drop it
    outbox: list[msgspec.Raw] = []  # sends queued, in order
    actions: list[object] = []  # action id, action JSON, id, JSON...
    counts: CountArgs | None = None


_encoder = msgspec.msgpack.Encoder()


def encode(args: CommitArgs) -> bytes:
    """The map the script unpacks."""
    return _encoder.encode(args)
