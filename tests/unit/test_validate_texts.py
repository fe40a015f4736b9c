"""message_too_long: every static text the bot sends, measured as written."""
from __future__ import annotations

from typing import Any

import pytest

from flows.load import load
from flows.model import Flow
from flows.validate import validate


def make(state: dict[str, Any] | None = None, **top: Any) -> Flow:
    s = {"id": "s", "say": [{"text": "Hi"}], "input": {"type": "text", "save_as": "v"}, **(state or {})}
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "t", "title": "T", "start": "s",
                           "states": [s, {"id": "x", "final": True}],
                           "transitions": [{"id": "t1", "from": "s", "to": "x", "on": "input"}]}
    doc.update(top)
    return load(doc)


def too_long(flow: Flow) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return [(i.severity, i.states, i.transitions) for i in validate(flow) if i.code == "message_too_long"]


def messages(flow: Flow) -> list[str]:
    return [i.message for i in validate(flow) if i.code == "message_too_long"]


def button(text: str = "Ok", payload: str = "ok") -> dict[str, Any]:
    return {"say": [{"text": "Hi", "buttons": [[{"text": text, "payload": payload}]]}]}


IN_A_STATE = {
    "say text": {"say": [{"text": "Hi"}, {"text": "x" * 4001}]},
    "button text": button(text="b" * 129),
    "button payload": button(payload="p" * 1025),
    "link button text": {"say": [{"text": "Hi", "buttons": [[{"text": "b" * 129, "url": "https://e.org"}]]}]},
    "input error": {"input": {"type": "text", "save_as": "v", "error": "e" * 4001}},
}


@pytest.mark.parametrize("state", IN_A_STATE.values(), ids=IN_A_STATE.keys())
def test_long_text_in_a_state_is_an_error_naming_the_state(state: dict[str, Any]) -> None:
    assert too_long(make(state)) == [("error", ("s",), ())]


def test_message_names_where_and_how_long() -> None:
    (message,) = messages(make({"say": [{"text": "Hi"}, {"text": "x" * 4001}]}))
    assert 'Message 2 of state "s"' in message and "4001" in message and "4000" in message


AT_THE_LIMIT = {
    "say text": {"say": [{"text": "x" * 4000}]},
    "button text and payload": button(text="b" * 128, payload="p" * 1024),
    "input error": {"input": {"type": "text", "save_as": "v", "error": "e" * 4000}},
}


@pytest.mark.parametrize("state", AT_THE_LIMIT.values(), ids=AT_THE_LIMIT.keys())
def test_texts_at_the_limit_are_fine(state: dict[str, Any]) -> None:
    assert too_long(make(state)) == []


def test_length_is_measured_before_rendering() -> None:
    # 3990 characters plus a placeholder that might render long: the written text is what counts.
    assert too_long(make({"say": [{"text": "x" * 3990 + "{v}"}]})) == []
    assert too_long(make({"say": [{"text": "x" * 3995 + "{v}{v}"}]})) == [("error", ("s",), ())]


GLOBAL = {
    "fallback": {"settings": {"fallback": "f" * 4001}},
    "command reply": {"commands": {"help": {"match": ["/help"], "reply": "h" * 4001}}},
    "default command with a long reply": {"commands": {"cancel": {"reply": "c" * 4001}}},
    "reminder text": {"settings": {"reminder": {"after": 60, "text": "r" * 4001}}},
    "reminder button": {"settings": {"reminder": {"after": 60, "text": "Still there?",
                                                  "buttons": [[{"text": "b" * 129, "payload": "go"}]]}}},
    "reminder payload": {"settings": {"reminder": {"after": 60, "text": "Still there?",
                                                   "buttons": [[{"text": "Go", "payload": "p" * 1025}]]}}},
}


@pytest.mark.parametrize("top", GLOBAL.values(), ids=GLOBAL.keys())
def test_long_global_text_is_an_error(top: dict[str, Any]) -> None:
    assert too_long(make(**top)) == [("error", (), ())]


def test_disabled_command_reply_is_not_sent_so_not_checked() -> None:
    # A null command is disabled as a whole; nothing of it is ever sent.
    assert too_long(make(commands={"cancel": None})) == []


def test_each_long_text_is_its_own_issue() -> None:
    flow = make({"say": [{"text": "x" * 5000, "buttons": [[{"text": "b" * 200, "payload": "p" * 2000}]]}]},
                settings={"fallback": "f" * 4500})
    assert too_long(flow) == [("error", ("s",), ())] * 3 + [("error", (), ())]
