"""The Redis store's Lua scripts, read from `lua/*.lua`: each runs atomically, so a turn's begin and its
commit are one step each. A script's first line `-- needs: a, b` names the libraries put before it."""
from __future__ import annotations

from pathlib import Path

from server.channels.ratelimit import GCRA
from server.runtime.stores.resp import Script

HERE = Path(__file__).resolve().parent / "lua"
NEEDS = "-- needs:"


def source(name: str) -> str:
    """The script `name` as Redis runs it: the libraries it needs, then its own text."""
    text = (HERE / f"{name}.lua").read_text(encoding="utf-8")
    first = text.split("\n", 1)[0]
    if not first.startswith(NEEDS):
        return text
    return "".join(_LIBRARIES[lib.strip()] for lib in first[len(NEEDS):].split(",")) + text


_LIBRARIES = {"gcra": GCRA}
# Funnel counters: `bump` and `count_expired`, shared by COMMIT and WAKE.
_LIBRARIES["funnel"] = source("funnel")


def _load(name: str) -> Script:
    return Script(source(name))


BEGIN = _load("begin")
RENEW = _load("renew")
COMMIT = _load("commit")
ERASE = _load("erase")
RELEASE = _load("release")
WAKE = _load("wake")
FOLD_EXPIRY = _load("fold_expiry")
OUTBOX_CLAIM = _load("outbox_claim")
OUTBOX_HOLD = _load("outbox_hold")
OUTBOX_DONE = _load("outbox_done")
OUTBOX_LATER = _load("outbox_later")
OUTBOX_ACKS = _load("outbox_acks")
CLAIM = _load("claim")
ACTION_LATER = _load("action_later")
OUTBOX_SAMPLE = _load("outbox_sample")
TURN_MARK = _load("turn_mark")
