"""Small helpers the services share."""
from __future__ import annotations

import re
from datetime import datetime, timezone

from sqlalchemy.exc import IntegrityError

from flows.format import FLOW_ID

USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
MAX_INT = 2**31 - 1


def iso(moment: datetime | None) -> str | None:
    """UTC ISO 8601 with a Z; SQLite hands datetimes back naive, so naive means UTC."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def is_slug(value: object) -> bool:
    """Whether `value` is an id of the flow format's slug shape."""
    return isinstance(value, str) and FLOW_ID.fullmatch(value) is not None


# PostgreSQL's deadlock and serialisation failures: two writers met; the loser's work is undone.
RACE_STATES = {"40P01", "40001"}


def raced(exc: Exception) -> bool:
    """Whether a write failed because another request changed the same rows at that moment."""
    if isinstance(exc, IntegrityError):
        return True
    orig = getattr(exc, "orig", None)
    return (getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)) in RACE_STATES
