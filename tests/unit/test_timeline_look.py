"""A reply's markup and picture are kept in the timeline: the brief, its record, the API's entries, the transcript."""
from __future__ import annotations

import json

from flows.dialog import Reply, StepResult, Update
from server.runtime import timeline
from web.transcript import lines

AFTER = {"flow": "f", "version": 1, "state": "done", "data": {"name": "Ann"}, "history": ["ask"]}


def record() -> dict:
    result = StepResult(None, [Reply("plain"), Reply("<b>Ann</b>", [[{"text": "Ok", "payload": "ok"}]], "html"),
                               Reply("", [], None, "https://cdn.example.com/a.png"),
                               Reply("**cat**", [], "markdown", None, "up_0123456789abcdef01234567")],
                        transition="t1", reason="valid", outcome="transition")
    brief = timeline.brief(5.0, Update.message("Ann"), "ask", result, AFTER)
    # The brief is what the stores keep as JSON: it must survive the trip.
    return timeline.expand(json.loads(json.dumps(brief)), timeline.snapshot(AFTER))


def test_plain_replies_keep_their_short_entry() -> None:
    assert record()["e"][2] == ["reply", "done", None, "plain"]


def test_the_api_entries_carry_format_and_picture() -> None:
    replies = [e for e in timeline.entries([record()]) if e["kind"] == "reply"]
    assert [{k: e.get(k) for k in ("text", "format", "image", "upload")} for e in replies] == [
        {"text": "plain", "format": None, "image": None, "upload": None},
        {"text": "<b>Ann</b>", "format": "html", "image": None, "upload": None},
        {"text": "", "format": None, "image": "https://cdn.example.com/a.png", "upload": None},
        {"text": "**cat**", "format": "markdown", "image": None, "upload": "up_0123456789abcdef01234567"},
    ]
    assert "format" not in replies[0] and "buttons" not in replies[1]
    entry, _snap = timeline.state_at([record()], 3)
    assert entry["format"] == "html"


def test_the_transcript_knows_each_replys_look() -> None:
    found = [line for line in lines([record()]) if line.kind == "reply"]
    assert [line.look for line in found] == [None, {"format": "html"}, {"image": "https://cdn.example.com/a.png"},
                                             {"format": "markdown", "upload": "up_0123456789abcdef01234567"}]
    assert [line.picture for line in found] == [None, None, "https://cdn.example.com/a.png",
                                                "/api/uploads/up_0123456789abcdef01234567"]
