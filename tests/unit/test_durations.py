"""Times with units in the forms: shown in the largest exact unit, read back as whole seconds."""
from __future__ import annotations

import pytest

from web import durations
from web.forms import Fields


@pytest.mark.parametrize(("seconds", "amount", "unit"), [
    (1800, "30", "min"), (7200, "2", "h"), (5400, "90", "min"), (86400, "1", "d"), (604800, "7", "d"),
    (90, "90", "s"), (45, "45", "s"), (None, "", "min"), (1.5, "1.5", "s")])
def test_a_stored_time_is_shown_in_the_largest_exact_unit(seconds, amount, unit):
    assert durations.shown(seconds) == {"amount": amount, "unit": unit}


@pytest.mark.parametrize(("amount", "unit", "seconds"), [
    ("30", "min", 1800), ("2", "h", 7200), ("1,5", "h", 5400), ("7", "d", 604800), ("45", "s", 45), ("", "h", None)])
def test_a_typed_time_is_read_as_seconds(amount, unit, seconds):
    f = Fields({"after": [amount], "after.unit": [unit]})
    assert durations.read(f, "after") == seconds and not f.errors


def test_a_time_without_a_unit_is_seconds_as_before():
    f = Fields({"after": ["300"]})
    assert durations.read(f, "after") == 300


@pytest.mark.parametrize(("amount", "unit", "says"), [
    ("0", "min", "greater than zero"), ("-1", "h", "greater than zero"), ("0.001", "min", "whole number of seconds"),
    ("abc", "min", "number"), ("5", "weeks", "Choose seconds, minutes, hours or days"), ("0", "s", "at least 1")])
def test_a_wrong_time_is_a_field_error(amount, unit, says):
    f = Fields({"after": [amount], "after.unit": [unit]})
    assert durations.read(f, "after") is None
    assert says in f.errors["after"]


def test_a_field_not_shown_yet_starts_in_minutes_like_a_blank_one():
    assert durations.posted(Fields({}), "after") == {"amount": "", "unit": "min"}
    assert durations.posted(Fields({"after": ["300"]}), "after") == {"amount": "300", "unit": "s"}
