"""Load errors carry a code and params; the designer says them in Russian from those, the API keeps its English."""
from __future__ import annotations

import pickle
import re
from typing import Any

import pytest

from flows.errors import FlowFormatError
from flows.load import load
from web import i18n
from web.messages import LOADER_WORDS, human_detail

def problems(**changes: Any) -> list[dict[str, Any]]:
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "f", "start": "a", "transitions": [],
                           "states": [{"id": "a", "final": True, "say": [{"text": "Hi"}]}]}
    doc.update(changes)
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    return caught.value.details


def say(**message: Any) -> list[dict[str, Any]]:
    return [{"id": "a", "final": True, "say": [{"text": "Hi", **message}]}]


CASES = {
    "number_too_large": dict(settings={"reminder": {"after": 2 ** 60, "text": "x"}}),
    "number_above_maximum": dict(settings={"session_ttl": 10 ** 9}),
    "reminder_after_expiry": dict(settings={"session_ttl": 60, "reminder": {"after": 120, "text": "x"}}),
    "bad_data_key": dict(states=[{"id": "a", "say": [{"text": "?"}], "input": {"type": "text", "save_as": "1x"}},
                                 {"id": "b", "final": True}],
                         transitions=[{"id": "t", "from": "a", "to": "b", "on": "input"}]),
    "bad_state_id": dict(states=[{"id": "Bad State", "final": True}], start="Bad State"),
    "bad_flow_id": dict(id="Bad Flow"),
    "unknown_field": dict(settings={"zzz": 1}),
    "missing_field": dict(states=[{"id": "a", "final": True, "say": [{"buttons": []}]}]),
    "bad_picture_url": dict(states=say(image="ftp://pic")),
    "html_unknown_tag": dict(states=say(format="html", text="<blink>x</blink>")),
    "html_never_closed": dict(states=say(format="html", text="<b>x")),
    "html_never_opened": dict(states=say(format="html", text="x</b>")),
    "html_crossed": dict(states=say(format="html", text="<b><i>x</b></i>")),
    "html_bad_attribute": dict(states=say(format="html", text="<b class='x'>x</b>")),
}


def coded(code: str) -> dict[str, Any]:
    found = [d for d in problems(**CASES[code]) if d.get("code") == code]
    assert found, (code, problems(**CASES[code]))
    return found[0]


def test_every_code_has_a_case_and_every_code_raised_has_words() -> None:
    assert set(CASES) == set(LOADER_WORDS)
    raised = {d["code"] for case in CASES.values() for d in problems(**case) if "code" in d}
    assert raised <= set(LOADER_WORDS), raised - set(LOADER_WORDS)


@pytest.mark.parametrize("code", sorted(LOADER_WORDS))
def test_each_load_error_code_reads_in_russian(code: str) -> None:
    found = coded(code)
    assert isinstance(found["message"], str) and type(found["message"]) is str  # the API's text is plain English
    i18n.set_language("ru")
    try:
        russian = human_detail(found)["message"]
    finally:
        i18n.set_language("en")
    english = human_detail(found)["message"]
    assert russian != english and russian != found["message"], (code, russian)
    assert re.search("[а-яё]", russian), (code, russian)
    assert "%(" not in russian


def test_the_api_keeps_its_english_words() -> None:
    assert coded("bad_flow_id")["message"] == ('flow id "Bad Flow" is not valid; use 1-64 characters: a lowercase'
                                               " Latin letter first, then lowercase letters, digits, _ or -")
    assert coded("html_never_closed")["message"] == ("the html text cannot be shown: <b> is opened but never closed;"
                                                     " add </b>")
    assert coded("html_never_closed")["params"] == {"tag": "b"}
    assert coded("reminder_after_expiry")["message"] == (
        "the reminder (120 s) must come before the dialog expires (session_ttl 60 s); make reminder.after smaller"
        " than session_ttl")


def test_a_coded_error_survives_a_process_boundary() -> None:
    error = FlowFormatError("bad", problems(**CASES["bad_state_id"]))
    again = pickle.loads(pickle.dumps(error))
    assert again.details == error.details and again.details[0]["code"] == "bad_state_id"


def test_the_russian_words_come_from_the_params_not_the_english() -> None:
    found = coded("bad_state_id")
    i18n.set_language("ru")
    try:
        russian = human_detail({**found, "message": "something else entirely"})["message"]
    finally:
        i18n.set_language("en")
    assert "«Bad State»" in russian or '"Bad State"' in russian


def test_an_unknown_field_close_to_a_known_one_is_named_in_russian() -> None:
    found = [d for d in problems(settings={"session_tt": 60}) if d.get("code") == "unknown_field"][0]
    assert found["params"]["close"] == "session_ttl"
    assert found["message"].startswith('unknown field "session_tt" in settings; did you mean "session_ttl"?')
    i18n.set_language("ru")
    try:
        assert human_detail(found)["message"] == ("здесь нет поля «session_tt»; может быть, имелось в виду"
                                                  " «session_ttl»?")
    finally:
        i18n.set_language("en")
