"""Languages in the loader and the validator: load errors with paths, `missing_translation` warnings."""
from __future__ import annotations

from typing import Any

import pytest

from flows.errors import FlowFormatError
from flows.fastcheck import well_formed
from flows.load import load
from flows.schema import format_problems
from flows.validate import validate


def doc(**top: Any) -> dict[str, Any]:
    base = {
        "format": "botflow/v1", "id": "f", "start": "a", "languages": ["ru", "en", "kk"],
        "states": [
            {"id": "a", "say": [{"text": {"ru": "Привет", "en": "Hello", "kk": "Сәлем"},
                                 "buttons": [[{"text": {"ru": "Да", "en": "Yes"}, "payload": "yes"}]]}],
             "input": {"type": "choice", "choices": {"ru": ["Да", "Нет"], "en": ["Yes", "No"], "kk": ["Иә", "Жоқ"]},
                       "error": "Выберите"}},
            {"id": "b", "final": True, "say": [{"text": "Пока"}]},
        ],
        "transitions": [{"id": "t", "from": "a", "to": "b", "on": "input"}],
    }
    base.update(top)
    return base


def problems(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(FlowFormatError) as caught:
        load(raw)
    assert not well_formed(raw)  # the quick check never lets a broken document through
    return {d["path"]: d["message"] for d in caught.value.details}


def test_a_well_formed_multilingual_document_loads_and_passes_the_quick_check() -> None:
    raw = doc()
    assert well_formed(raw)
    assert format_problems(raw) == []
    assert load(raw).languages == ("ru", "en", "kk")


def test_a_key_that_is_not_a_listed_language_is_a_load_error_naming_its_path() -> None:
    raw = doc(languages=["ru", "en"])
    found = problems(raw)
    assert set(found) == {"states[0].say[0].text.kk", "states[0].input.choices.kk"}
    assert "not one of the flow's languages (ru, en)" in found["states[0].say[0].text.kk"]


def test_text_objects_without_languages_are_load_errors() -> None:
    raw = doc()
    del raw["languages"]
    found = problems(raw)
    assert set(found) == {"states[0].say[0].text", "states[0].say[0].buttons[0][0].text", "states[0].input.choices"}
    assert '"languages" list at the top' in found["states[0].say[0].text"]


@pytest.mark.parametrize(("languages", "path", "words"), [
    (["RU"], "languages[0]", "not a language code"),
    (["russian"], "languages[0]", "not a language code"),
    ([], "languages", "at least one code"),
    ("ru", "languages", "must be a list"),
    (["ru", "en", "kk", "en"], "languages[3]", "listed twice"),
])
def test_the_languages_list_is_checked(languages: Any, path: str, words: str) -> None:
    found = problems(doc(languages=languages))
    assert words in found[path]


def test_bad_codes_values_and_lengths_inside_text_objects() -> None:
    raw = doc()
    raw["states"][0]["say"][0]["text"] = {"ru": "Привет", "EN": "Hello"}
    raw["states"][1]["say"][0]["text"] = {"ru": 5}
    raw["states"][0]["input"]["choices"]["en"] = ["Yes"]
    raw["states"][0]["input"]["error"] = {}
    found = problems(raw)
    assert "not a language code" in found['states[0].say[0].text.EN']
    assert "must be a string" in found["states[1].say[0].text.ru"]
    assert "same length" in found["states[0].input.choices"]
    assert "needs at least one" in found["states[0].input.error"]


def test_a_switch_to_an_unlisted_language_is_a_load_error() -> None:
    raw = doc()
    raw["transitions"][0]["language"] = "de"
    assert "not one of the flow's languages" in problems(raw)["transitions[0].language"]
    raw["transitions"][0]["language"] = "German"
    assert "not a language code" in problems(raw)["transitions[0].language"]


def test_x_keys_are_allowed_inside_text_objects() -> None:
    raw = doc()
    raw["states"][0]["say"][0]["text"]["x-note"] = {"by": "translator"}
    assert well_formed(raw)
    load(raw)


def test_missing_translation_is_one_warning_per_language_naming_the_paths() -> None:
    found = [i for i in validate(load(doc())) if i.code == "missing_translation"]
    assert [i.severity for i in found] == ["warning", "warning"]
    english, kazakh = found
    assert '2 texts have no "en" translation' in english.message
    assert "states[0].input.error" in english.message and "states[1].say[0].text" in english.message
    assert '"kk"' in kazakh.message and "states[0].say[0].buttons[0][0].text" in kazakh.message
    assert kazakh.states == ("a", "b")


def test_a_complete_translation_has_no_warning_and_one_language_never_warns() -> None:
    raw = doc(languages=["ru"])
    raw["states"][0] = {"id": "a", "say": [{"text": "Привет"}], "input": {"type": "text"}}
    assert not [i for i in validate(load(raw)) if i.code == "missing_translation"]


def test_a_translation_too_long_is_message_too_long() -> None:
    raw = doc()
    raw["states"][0]["say"][0]["text"]["en"] = "x" * 4001
    raw["states"][0]["say"][0]["buttons"][0][0]["text"]["en"] = "y" * 129
    found = [i.message for i in validate(load(raw)) if i.code == "message_too_long"]
    assert any("states[0].say[0].text" in m and "4001" in m for m in found)
    assert any("buttons[0][0].text" in m and "129" in m for m in found)


def test_every_languages_html_is_checked_with_the_messages_format() -> None:
    raw = doc()
    raw["states"][0]["say"][0].update(format="html", text={"ru": "<b>Привет</b>", "en": "<b>Hello"})
    found = problems(raw)
    assert list(found) == ["states[0].say[0].text.en"]
    assert "html" in found["states[0].say[0].text.en"]


def test_every_kind_of_text_object_needs_the_languages_list() -> None:
    raw = {"format": "botflow/v1", "id": "f", "start": "a",
           "settings": {"session_ttl": 600, "fallback": {"ru": "?"},
                        "reminder": {"after": 60, "text": "Вы тут?",
                                     "buttons": [[{"text": {"ru": "Да"}, "payload": "y"}]]}},
           "commands": {"help": {"match": ["/help"], "reply": {"ru": "Помощь"}}},
           "states": [{"id": "a", "say": [{"text": "Привет"}], "input": {"type": "text", "error": {"ru": "Ошибка"}}},
                      {"id": "b", "final": True}],
           "transitions": [{"id": "t", "from": "a", "to": "b", "on": "input", "language": "en"}]}
    assert set(problems(raw)) == {"settings.fallback", "settings.reminder.buttons[0][0].text", "commands.help.reply",
                                  "states[0].input.error", "transitions[0].language"}


def test_a_translation_that_inserts_an_uncollected_key_is_undefined_variable() -> None:
    raw = doc()
    raw["states"][1]["say"][0]["text"] = {"ru": "Пока", "en": "Bye, {nickname}"}
    found = [i for i in validate(load(raw)) if i.code == "undefined_variable"]
    assert len(found) == 1 and "nickname" in found[0].message
    raw["states"][1]["say"][0]["text"] = {"ru": "Пока, {nickname}", "en": "Bye, {nickname}"}
    assert len([i for i in validate(load(raw)) if i.code == "undefined_variable"]) == 1  # one, not one per language
