"""Redis key names: one prefix, a format-version segment, and a hash tag per dialog."""
from __future__ import annotations

# Bump when the stored shapes change: old keys are then simply never read and expire by TTL.
FORMAT_VERSION = "v1"


class Keys:
    """Builds every key the runtime uses under one prefix (tests pass a unique prefix)."""

    __slots__ = ("base", "timers", "outq", "outc", "actq", "acts", "rate", "timeline", "mover", "channel",
                 "legacy_expiry", "expiry_info", "counters", "counter_index", "roller")

    def __init__(self, prefix: str = "botflow") -> None:
        self.base = f"{prefix}:{FORMAT_VERSION}:"
        # zset: member -> when to look at that dialog next: its timer's due time, or just after its expiry
        # if that comes first and the funnel counts (then an entry whose dialog is gone counts an expiry)
        self.timers = self.base + "timers"
        self.outq = self.base + "outq"  # zset: member -> next look at that user's outbox (retry or claim end)
        self.outc = self.base + "outc"  # hash: member -> owner token of the claim on that user's outbox
        self.actq = self.base + "actq"  # zset: action id -> next attempt
        self.acts = self.base + "acts"  # hash: action id -> action JSON
        self.timeline = self.base + "tl"  # stream: timeline records on their way to the database
        self.mover = self.base + "tl:mover"  # string, PX: the replica moving the stream right now
        self.rate = self.base + "rate:"  # + bot: string, the bot's shared send schedule (GCRA)
        self.channel = self.base + "publish"  # pub/sub: publications and bot changes
        self.legacy_expiry = self.base + "fx"  # zset of earlier releases, folded into timers by the sweep
        self.expiry_info = self.base + "fxi"  # hash: member -> "flow|version<TAB>state" of that dialog
        self.counters = self.base + "fn:"  # + bot|flow|version|hour: hash, funnel counter fields
        self.counter_index = self.base + "fnk"  # zset: counter key -> its hour (what the rollup copies)
        self.roller = self.base + "fnr"  # string, PX: the replica copying counters to the database now

    def user(self, bot: str, user: str) -> str:
        """The common part of one dialog's keys; the braces keep them in one cluster slot."""
        return f"{self.base}{{{bot}:{user}}}:"

    def marks(self, bot: str, bucket: int) -> str:
        """The set of a bot's duplicate marks made in one time bucket (see stores.redis.mark)."""
        return f"{self.base}dd:{bot}:{bucket}"

    def dialog_pattern(self, bot: str) -> str:
        """SCAN pattern matching every dialog key of a bot."""
        return f"{self.base}{{{bot}:*}}:d"

    def outbox_pattern(self, bot: str) -> str:
        """SCAN pattern matching every outbox key (a user's queued sends) of a bot."""
        return f"{self.base}{{{bot}:*}}:o"

    def parse_dialog(self, key: str) -> tuple[str, str]:
        """(bot, user) from a dialog or outbox key."""
        inner = key[len(self.base) + 1 : key.rindex("}")]
        bot, _, user = inner.rpartition(":")
        return bot, user


def member(bot: str, user: str) -> str:
    """A dialog's member name in the global timer and outbox sets."""
    return f"{bot}|{user}"


def split_member(value: str) -> tuple[str, str]:
    """(bot, user) from `member` output."""
    bot, _, user = value.rpartition("|")
    return bot, user
