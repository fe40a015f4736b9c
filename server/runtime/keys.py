"""Redis key names: one prefix, a format-version segment, and hash tags that keep a turn's keys in one slot.

A single Redis keeps the layout it always had: one set of shared structures (timers, outbox queue, actions,
timeline stream, funnel index) and a hash tag per dialog. In a Redis Cluster (`buckets` > 0) every bot
belongs to one of `buckets` buckets; the bucket's shared structures and every key of the bot's users
(dialog, lock, outbox, duplicate marks, rate schedule, funnel counters) carry the bucket's hash tag
`{<prefix>:<n>}`, so each script a turn runs touches one slot, and no key is written by every bot.
"""
from __future__ import annotations

import zlib

# Bump when the stored shapes change: old keys are then simply never read and expire by TTL.
FORMAT_VERSION = "v1"

# A cluster's buckets: enough to spread over a few dozen masters (16,384 slots), few enough that the
# pollers' one call per bucket per pass stays cheap.
CLUSTER_BUCKETS = 64


class Bucket:
    """The shared structures of one bucket (all of them, on a single Redis), under one key prefix."""

    __slots__ = ("base", "timers", "outq", "outc", "outp", "actq", "acts", "rate", "timeline", "mover",
                 "legacy_expiry", "expiry_info", "counters", "counter_index", "sid_prefix")

    def __init__(self, base: str, number: int | None = None) -> None:
        self.base = base  # what a user's keys start with (then `{bot:user}:`)
        # Stream ids are unique within a stream only: a moved record's id in the database (unique there)
        # names its bucket's stream first.
        self.sid_prefix = f"{number}/" if number is not None else ""
        # zset: member -> when to look at that dialog next: its timer's due time, or just after its expiry
        # if that comes first and the funnel counts (then an entry whose dialog is gone counts an expiry)
        self.timers = base + "timers"
        self.outq = base + "outq"  # zset: member -> next look at that user's outbox (retry or claim end)
        self.outc = base + "outc"  # hash: member -> owner token of the claim on that user's outbox
        self.outp = base + "outp"  # hash: last outbox poll and until when no claim is taken (Redis TIME ms)
        self.actq = base + "actq"  # zset: action id -> next attempt
        self.acts = base + "acts"  # hash: action id -> action JSON
        self.timeline = base + "tl"  # stream: timeline records on their way to the database
        self.mover = base + "tl:mover"  # string, PX: the replica moving the stream right now
        self.rate = base + "rate:"  # + bot: string, the bot's shared send schedule (GCRA)
        self.legacy_expiry = base + "fx"  # zset of earlier releases, folded into timers by the sweep
        self.expiry_info = base + "fxi"  # hash: member -> "flow|version<TAB>state" of that dialog
        self.counters = base + "fn:"  # + bot|flow|version|hour: hash, funnel counter fields
        self.counter_index = base + "fnk"  # zset: counter key -> its hour (what the rollup copies)


class Keys(Bucket):
    """Builds every key the runtime uses under one prefix (tests pass a unique prefix). Its own shared
    names are the single Redis's; in a cluster, `of(bot)` names the bot's bucket and `all` every bucket."""

    __slots__ = ("buckets", "all", "channel", "epoch", "roller", "_of")

    def __init__(self, prefix: str = "botflow", buckets: int = 0) -> None:
        super().__init__(f"{prefix}:{FORMAT_VERSION}:")
        self.buckets = buckets
        self.all: list[Bucket] = ([Bucket(f"{self.base}{{{prefix}:{n}}}:", n) for n in range(buckets)] if buckets
                                  else [self])
        self.channel = self.base + "publish"  # pub/sub: publications and bot changes
        self.epoch = self.base + "epoch"  # hash: id (made once), lost (Redis TIME s when it was found empty)
        self.roller = self.base + "fnr"  # string, PX: the replica copying counters to the database now
        self._of: dict[str, Bucket] = {}

    def of(self, bot: str) -> Bucket:
        """The bucket holding the bot's users and their shared structures."""
        if not self.buckets:
            return self
        found = self._of.get(bot)
        if found is None:
            if len(self._of) > 100_000:
                self._of.clear()
            found = self._of[bot] = self.all[zlib.crc32(bot.encode()) % self.buckets]
        return found

    def user(self, bot: str, user: str) -> str:
        """The common part of one dialog's keys; the braces keep them in one slot (a cluster's: the
        bucket's, whose tag comes first)."""
        base = self.of(bot).base if self.buckets else self.base  # (one call fewer a turn on a single Redis)
        return f"{base}{{{bot}:{user}}}:"

    def rate_key(self, bot: str) -> str:
        """The bot's shared send schedule (`channels.ratelimit`), in the bot's bucket."""
        return self.of(bot).rate + bot

    def turn_mark(self, base: str) -> str:
        """A dialog's turn high-water mark, from its `user()` part: a string, the highest turn number a
        replica remembered committing when it followed a failover (`stores.lost`), expiring with the dialog."""
        return base + "w"

    def marks(self, bot: str, bucket: int) -> str:
        """The set of a bot's duplicate marks made in one time bucket (see stores.redis.mark)."""
        return f"{self.of(bot).base}dd:{bot}:{bucket}"

    def dialog_pattern(self, bot: str) -> str:
        """SCAN pattern matching every dialog key of a bot."""
        return f"{self.of(bot).base}{{{bot}:*}}:d"

    def outbox_pattern(self, bot: str) -> str:
        """SCAN pattern matching every outbox key (a user's queued sends) of a bot."""
        return f"{self.of(bot).base}{{{bot}:*}}:o"

    def parse_dialog(self, key: str) -> tuple[str, str]:
        """(bot, user) from a dialog or outbox key."""
        rest = key[len(self.base):]
        if self.buckets:  # past the bucket's tag
            rest = rest[rest.index("}:") + 2:]
        inner = rest[1:rest.rindex("}")]
        bot, _, user = inner.rpartition(":")
        return bot, user


def member(bot: str, user: str) -> str:
    """A dialog's member name in the global timer and outbox sets."""
    return f"{bot}|{user}"


def split_member(value: str) -> tuple[str, str]:
    """(bot, user) from `member` output."""
    bot, _, user = value.rpartition("|")
    return bot, user
