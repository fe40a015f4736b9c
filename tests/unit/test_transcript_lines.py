"""The transcript marks a point openable exactly where the state-at-entry rule finds a dialog."""
from __future__ import annotations

from server.runtime import timeline
from web.transcript import lines

SNAP = {"flow": "f", "version": 1, "state": "ask", "data": {}, "history": []}


def records() -> list[dict]:
    return [
        {"t": 1.0, "e": [["message", None, None, "/start"], ["opened", "ask", None, "why"],
                         ["reply", "ask", None, "Hi"]], "s": SNAP},
        {"t": 2.0, "e": [["message", "ask", None, "Ann"], ["transition", "done", "t1", "valid"],
                         ["completed", "done", None, "{}"]], "s": None},
        {"t": 3.0, "e": [["dropped", "ask", None, "reset"]], "s": None},
    ]


def test_openable_points_follow_state_at() -> None:
    found = lines(records())
    assert [line.index for line in found] == list(range(7))
    for line in found:
        assert line.can_open == (timeline.state_at(records(), line.index)[1] is not None)
    assert [line.can_open for line in found] == [False, True, True, True, False, False, False]


def test_sides_and_words() -> None:
    found = lines(records())
    assert [line.side for line in found] == ["user", "system", "bot", "user", "system", "system", "system"]
    assert found[4].transition == "t1" and found[4].words == "transition"
    assert found[0].time == "1970-01-01T00:00:01.000Z"
