"""Times typed with a unit (seconds, minutes, hours, days) in the forms, stored as seconds in the document."""
from __future__ import annotations

from typing import Any

from web.forms import Fields
from web.i18n import N_
from web.i18n import gettext as _

UNITS: tuple[tuple[str, int, str], ...] = (
    ("s", 1, N_("seconds")), ("min", 60, N_("minutes")), ("h", 3600, N_("hours")), ("d", 86400, N_("days")))
SECONDS = {code: size for code, size, _title in UNITS}


def unit_choices() -> list[tuple[str, str]]:
    """The unit list as (code, title) in the reader's language."""
    return [(code, _(title)) for code, _size, title in UNITS]


def shown(seconds: Any) -> dict[str, str]:
    """A stored number of seconds in the largest unit it fills exactly (5400 -> 90 minutes, 7200 -> 2 hours)."""
    if seconds is None:
        return {"amount": "", "unit": "min"}  # the placeholders are minutes: the tiers people think in
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return {"amount": str(seconds), "unit": "s"}
    for code, size, _title in reversed(UNITS):
        if seconds >= size and seconds % size == 0:
            return {"amount": f"{seconds // size:g}" if isinstance(seconds, float) else str(seconds // size),
                    "unit": code}
    return {"amount": f"{seconds:g}", "unit": "s"}


def posted(f: Fields, name: str) -> dict[str, str]:
    """The amount and unit as typed, for showing the form again."""
    amount = f.text(name)
    # A field the form did not show yet (the reminder just turned on) starts in minutes, as a blank one does.
    return {"amount": amount, "unit": f.text(f"{name}.unit", "s" if amount else shown(None)["unit"])}


def read(f: Fields, name: str) -> int | float | None:
    """The field `name` (with its `name.unit` choice) in seconds; blank is None; a wrong entry records an error."""
    unit = f.text(f"{name}.unit", "s")
    if unit not in SECONDS:
        f.errors[name] = _("Choose seconds, minutes, hours or days.")
        return None
    amount = f.number(name, minimum=1 if unit == "s" else None)
    if amount is None:
        return None
    if amount <= 0:
        f.errors[name] = _("Enter a time greater than zero.")
        return None
    seconds = amount * SECONDS[unit]
    if isinstance(seconds, float):
        if not seconds.is_integer():
            f.errors[name] = _("Enter a whole number of seconds (%(n)s seconds is not).") % {"n": f"{seconds:g}"}
            return None
        seconds = int(seconds)
    return seconds
