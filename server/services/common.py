"""Small helpers the services share."""
from __future__ import annotations

import re
from datetime import datetime, timezone

SLUG = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
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
    return isinstance(value, str) and SLUG.fullmatch(value) is not None
