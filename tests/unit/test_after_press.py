"""A state's after_press: loaded and checked by the format, and rendered into MAX's callback answer."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from flows.canonical import ordered
from flows.errors import FlowFormatError
from flows.load import load
from server.channels.max.fake.schema import problems
from server.channels.max.render import answer_body, pressed_body

DOC: dict[str, Any] = {
    "format": "botflow/v1", "id": "p", "start": "ask",
    "states": [{"id": "ask", "say": [{"text": "Да?", "buttons": [[{"text": "Да", "payload": "y"}]]}]},
               {"id": "end", "final": True}],
    "transitions": [{"id": "yes", "from": "ask", "to": "end", "on": "button", "payload": "y"}],
}


def with_choice(value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    doc["states"][0]["after_press"] = value
    return doc


def test_the_choice_loads_and_keeping_is_the_default() -> None:
    assert load(DOC).state("ask").after_press == "keep"
    assert load(with_choice("replace")).state("ask").after_press == "replace"
    assert list(ordered(with_choice("replace"))["states"][0]) == ["id", "say", "after_press"]


@pytest.mark.parametrize("value", ["remove", "", 1, None])
def test_another_value_is_named_with_the_choices(value: Any) -> None:
    with pytest.raises(FlowFormatError) as refused:
        load(with_choice(value))
    assert "after_press" in str(refused.value.details) and "keep" in str(refused.value.details)


def test_an_answer_carries_only_what_is_set_and_is_valid_by_the_schema() -> None:
    assert answer_body() == {}
    assert answer_body(notification="Принято") == {"notification": "Принято"}
    replaced = answer_body(message=pressed_body({"text": "Да?", "label": "Да", "mode": "replace", "attachments": [
        {"type": "image", "payload": {"photo_id": 1, "token": "t-1", "url": "https://i.max.ru/p.jpg"}},
        {"type": "sticker", "payload": {"code": "c"}}]}))
    assert replaced == {"message": {"text": "Да?\n\n✓ Да", "link": None,
                                    "attachments": [{"type": "image", "payload": {"token": "t-1"}}]}}
    assert problems("CallbackAnswer", replaced) == []


def test_a_message_without_text_or_a_known_label_loses_only_its_keyboard() -> None:
    assert pressed_body({"text": None, "label": "Да", "mode": "replace"})["text"] == "✓ Да"
    assert pressed_body({"text": "Да?", "label": None, "mode": "replace"})["text"] == "Да?"
    long = pressed_body({"text": "я" * 4000, "label": "Да", "mode": "replace"})["text"]
    assert len(long) == 4000 and long.endswith("✓ Да")
