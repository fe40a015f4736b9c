"""What one turn adds to the funnel counters: fields per state and transition, durations in fixed buckets.

A counter group is one bot, flow, version and hour (a dialog in a language of a flow with languages counts
under `<version>~<language>`, so the funnel can be read per language or summed); inside it the fields are
`e:<state>` entered other than by a transition (a dialog opened or restarted there, or came back to it),
`f:<transition>:<bucket>` fired after the dialog spent a time in duration bucket `bucket` in the
transition's source (`:s` for a self-loop, which leaves nothing), `c:` / `r:` / `b:<state>:<bucket>`
ended there by cancel or a restart, or left by the back command, after such a time, and `x:<state>`
ended there by expiry. Entries by a transition and completions at a final state are read from the fires,
and a state's times from the fields leaving it: a turn that fires writes one field.
"""
from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from typing import Any


# Upper edges (seconds) of the time-in-state buckets; the last bucket is everything longer.
BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400)
HOUR = 3600
# How a dialog left a state other than by a transition, as the report names it (`completed` is read from
# the fires into a final state; `restart` and `back` are beside the three endings the funnel shows).
ENDINGS = {"c": "cancel", "x": "expired", "k": "completed", "r": "restart", "b": "back"}
# Redis keeps an hour's counters this long after its last increment; the rollup copies them to SQL
# every ROLLUP_EVERY seconds meanwhile, so they are in SQL long before Redis forgets them.
KEEP_SECONDS = 26 * HOUR
ROLLUP_EVERY = 30.0


def enabled() -> bool:
    """Counting is on unless BOTFLOW_FUNNEL=off (kept only so the benchmark can compare both)."""
    return os.environ.get("BOTFLOW_FUNNEL", "on").lower() not in ("off", "0", "false", "no")


def bucket(seconds: float) -> int:
    """The duration bucket of a time spent in a state."""
    return bisect.bisect_left(BUCKETS, max(0.0, seconds))


def counted(version: Any, language: Any) -> str:
    """The version part of a counter group: `3`, or `3~en` for a dialog in English."""
    return f"{version}~{language}" if language else f"{version}"


def group(flow: str, version: Any, at: float, language: Any = None) -> str:
    """A counter group's name within its bot: flow, version (with the dialog's language) and hour number."""
    return f"{flow}|{counted(version, language)}|{int(at // HOUR)}"


def split_group(name: str) -> tuple[str, str, int]:
    """(flow, version, hour) from `group` output."""
    flow, version, hour = name.rsplit("|", 2)
    return flow, version, int(hour)


@dataclass(slots=True)
class Counts:
    """The turn's increments as (group, field) pairs, and whether the dialog it found had run out.

    `prior_gone`: the turn found no live dialog (none stored, or the stored one past session_ttl); the
    store then counts the one it still remembers as expired, once, before the write replaces it.
    """

    pairs: list[tuple[str, str]]
    prior_gone: bool = False


def expired_fields(stored: dict[str, Any], now: float) -> tuple[str, str]:
    """The (group, field) counting a stored dialog as ended by expiry (SQL and memory stores)."""
    return group(str(stored.get("flow")), stored.get("version"), now, stored.get("language")), f"x:{stored.get('state')}"


def ledger_info(dialog: dict[str, Any]) -> str:
    """What the Redis store remembers of a dialog to count its expiry: its group prefix, a tab, its state."""
    return f"{dialog.get('flow')}|{counted(dialog.get('version'), dialog.get('language'))}\t{dialog.get('state')}"


def median_seconds(buckets: dict[int, int]) -> float | None:
    """The median time in state read from bucket counts: the upper edge of the bucket holding it."""
    total = sum(buckets.values())
    if total == 0:
        return None
    seen, half = 0, (total + 1) / 2
    for index in sorted(buckets):
        seen += buckets[index]
        if seen >= half:
            return float(BUCKETS[index]) if index < len(BUCKETS) else float(BUCKETS[-1])
    return None
