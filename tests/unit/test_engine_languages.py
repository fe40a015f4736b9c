"""Languages in the engine: the dialog's language, fallback per text, switches, choices, templates, hash."""
from __future__ import annotations

import copy
from typing import Any

from flows.build import localized
from flows.canonical import content_hash
from flows.engine import step
from flows.load import load
from flows.dialog import Dialog, Update
from flows.testing.updates import BadUpdate, parse_update

import pytest


def document() -> dict[str, Any]:
    """A three-language flow: a colour choice, a language menu, a final greeting with a template."""
    return {
        "format": "botflow/v1", "id": "shop", "start": "ask", "languages": ["ru", "en", "tt"],
        "settings": {
            "fallback": {"ru": "Не понял.", "en": "Sorry?"},
            "reminder": {"after": 60, "text": {"ru": "Вы тут?", "en": "Still there?"},
                         "buttons": [[{"text": {"ru": "Да", "en": "Yes"}, "payload": "here"}]]},
        },
        "commands": {"help": {"match": ["/help"], "reply": {"ru": "Помощь, {name}", "en": "Help, {name}"}}},
        "states": [
            {"id": "ask", "say": [{"text": {"ru": "Ваше имя?", "en": "Your name?", "tt": "Исемегез?"}}],
             "input": {"type": "text", "save_as": "name", "max_length": 20,
                       "error": {"ru": "Слишком длинно", "en": "Too long"}}},
            {"id": "colour", "say": [{"text": {"ru": "Цвет, {name}?", "en": "Colour, {name}?"},
                                      "buttons": [[{"text": {"ru": "Язык", "en": "Language"}, "payload": "lang"}]]}],
             "input": {"type": "choice", "save_as": "colour",
                       "choices": {"ru": ["Красный", "Синий"], "en": ["Red", "Blue"]}}},
            {"id": "menu", "say": [{"text": "Выберите язык / Choose a language",
                                    "buttons": [[{"text": "Русский", "payload": "ru"},
                                                 {"text": "English", "payload": "en"}]]}]},
            {"id": "done", "final": True, "say": [{"text": {"ru": "Итак: {colour}", "en": "So: {colour}"}}]},
        ],
        "transitions": [
            {"id": "named", "from": "ask", "to": "colour", "on": "input"},
            {"id": "to_menu", "from": "colour", "to": "menu", "on": "button", "payload": "lang"},
            {"id": "picked", "from": "colour", "to": "done", "on": "input"},
            {"id": "to_ru", "from": "menu", "to": "colour", "on": "button", "payload": "ru", "language": "ru"},
            {"id": "to_en", "from": "menu", "to": "colour", "on": "button", "payload": "en", "language": "en"},
        ],
    }


def texts(result) -> list[str]:
    return [reply.text for reply in result.replies]


def opened(locale: str | None, doc: dict[str, Any] | None = None):
    flow = load(doc or document())
    return flow, step(flow, None, Update.message("hi", locale=locale), 0.0)


@pytest.mark.parametrize(("locale", "language", "said"), [
    ("en", "en", "Your name?"), ("en-US", "en", "Your name?"), ("EN_gb", "en", "Your name?"),
    ("tt", "tt", "Исемегез?"), ("de-DE", "ru", "Ваше имя?"), (None, "ru", "Ваше имя?"), ("", "ru", "Ваше имя?"),
])
def test_the_dialog_opens_in_the_language_of_user_locale_by_primary_subtag(locale, language, said) -> None:
    _, result = opened(locale)
    assert result.dialog.language == language
    assert texts(result) == [said]


def test_the_language_stays_for_the_dialogs_life_whatever_later_updates_say() -> None:
    flow, result = opened("en")
    result = step(flow, result.dialog, Update.message("Ann", locale="ru"), 1.0)
    assert result.dialog.language == "en"
    assert texts(result) == ["Colour, Ann?"]
    assert result.replies[0].buttons == [[{"text": "Language", "payload": "lang"}]]


def test_a_missing_translation_falls_back_to_the_default_text_by_text() -> None:
    flow, result = opened("tt")
    assert texts(result) == ["Исемегез?"]  # translated
    result = step(flow, result.dialog, Update.message("Айгуль"), 1.0)
    assert texts(result) == ["Цвет, Айгуль?"]  # not translated: the default's, template filled
    assert result.replies[0].buttons == [[{"text": "Язык", "payload": "lang"}]]
    result = step(flow, result.dialog, Update.message("green"), 2.0)
    assert texts(result) == ["Не понял."]  # a choice's fallback, the default's


def test_error_fallback_command_reply_and_reminder_are_in_the_dialogs_language() -> None:
    flow, result = opened("en")
    bad = step(flow, result.dialog, Update.message("x" * 21), 1.0)
    assert texts(bad) == ["Too long"]
    named = step(flow, bad.dialog, Update.message("Bob"), 2.0)
    helped = step(flow, named.dialog, Update.message("/help"), 3.0)
    assert texts(helped) == ["Help, Bob"]
    reminded = step(flow, helped.dialog, Update.tick(), 3.0 + 60)
    assert reminded.outcome == "reminder"
    assert texts(reminded) == ["Still there?"]
    assert reminded.replies[0].buttons == [[{"text": "Yes", "payload": "here"}]]
    lost = step(flow, reminded.dialog, Update.message("purple"), 70.0)
    assert texts(lost)[0] == "Sorry?"


def test_choices_accept_the_dialogs_language_and_save_the_default_entry() -> None:
    flow, result = opened("en")
    named = step(flow, result.dialog, Update.message("Bob"), 1.0)
    done = step(flow, named.dialog, Update.message("  blue "), 2.0)
    assert done.outcome == "completed"
    assert done.completed.data["colour"] == "Синий"
    assert texts(done) == ["So: Синий"]
    # the default language's word is understood in an English dialog too
    again = step(flow, named.dialog, Update.message("красный"), 2.0)
    assert again.completed.data["colour"] == "Красный"
    # and an English word is not a choice in a Russian dialog
    flow, ru = opened("ru")
    ru = step(flow, ru.dialog, Update.message("Иван"), 1.0)
    refused = step(flow, ru.dialog, Update.message("Blue"), 2.0)
    assert refused.outcome == "input_invalid"


def test_a_transitions_language_switches_the_dialog_from_its_target_on() -> None:
    flow, result = opened("ru")
    named = step(flow, result.dialog, Update.message("Иван"), 1.0)
    menu = step(flow, named.dialog, Update.button("lang"), 2.0)
    switched = step(flow, menu.dialog, Update.button("en", locale="ru"), 3.0)
    assert switched.transition == "to_en"
    assert switched.dialog.language == "en"
    assert texts(switched) == ["Colour, Иван?"]
    done = step(flow, switched.dialog, Update.message("Red"), 4.0)
    assert texts(done) == ["So: Красный"]


def test_restart_opens_a_new_dialog_in_the_updates_language() -> None:
    flow, result = opened("en")
    restarted = step(flow, result.dialog, Update.message("/start", locale="tt"), 1.0)
    assert restarted.dialog.language == "tt"
    assert texts(restarted) == ["Исемегез?"]
    started = step(flow, restarted.dialog, Update.started(None, locale="en-GB"), 2.0)
    assert started.dialog.language == "en"


def test_the_language_is_kept_in_the_dialog_record() -> None:
    _, result = opened("en")
    record = result.dialog.to_dict()
    assert record["language"] == "en"
    assert Dialog.from_dict(record).language == "en"
    # a flow without languages keeps records as they were
    plain = load({"format": "botflow/v1", "id": "p", "start": "a", "states": [{"id": "a", "say": [{"text": "Hi"}]}]})
    record = step(plain, None, Update.message("hi", locale="en"), 0.0).dialog.to_dict()
    assert "language" not in record


def test_a_dialog_in_a_language_the_flow_no_longer_lists_reads_the_default() -> None:
    flow, result = opened("en")
    doc = document()
    doc["languages"] = ["ru", "tt"]
    for state in doc["states"]:
        for message in state.get("say", []):
            if isinstance(message["text"], dict):
                message["text"].pop("en", None)
            for row in message.get("buttons", []):
                for button in row:
                    if isinstance(button["text"], dict):
                        button["text"].pop("en", None)
        spec = state.get("input") or {}
        if isinstance(spec.get("error"), dict):
            spec["error"].pop("en")
        if isinstance(spec.get("choices"), dict):
            spec["choices"].pop("en")
    doc["settings"]["fallback"].pop("en")
    doc["settings"]["reminder"]["text"].pop("en")
    doc["settings"]["reminder"]["buttons"][0][0]["text"].pop("en")
    doc["commands"]["help"]["reply"].pop("en")
    doc["transitions"] = [t for t in doc["transitions"] if t.get("language") != "en"]
    newer = load(doc)
    result = step(newer, result.dialog, Update.message("Bob"), 1.0)
    assert texts(result) == ["Цвет, Bob?"]


def test_translations_are_part_of_the_hash_and_positions_are_not() -> None:
    doc = document()
    changed = copy.deepcopy(doc)
    changed["states"][0]["say"][0]["text"]["tt"] = "Исемегез нинди?"
    moved = copy.deepcopy(doc)
    moved["layout"] = {"ask": {"x": 10, "y": 20}}
    assert content_hash(changed) != content_hash(doc)
    assert content_hash(moved) == content_hash(doc)


def test_each_language_is_built_once_and_carries_the_version() -> None:
    flow = load(document())
    flow.version = 7
    english = localized(flow, "en")
    assert localized(flow, "en") is english
    assert localized(english, "ru") is flow
    assert english.version == 7 and english.language == "en"
    assert localized(flow, "de") is flow


def test_flows_without_languages_are_untouched_by_locales() -> None:
    plain = load({"format": "botflow/v1", "id": "p", "start": "a",
                  "states": [{"id": "a", "say": [{"text": "Привет"}]}]})
    result = step(plain, None, Update.message("hi", locale="en"), 0.0)
    assert result.dialog.language is None
    assert texts(result) == ["Привет"]


def test_the_simulators_update_carries_user_locale() -> None:
    update, _ = parse_update({"text": "hi", "user_locale": "en-US"})
    assert update.locale == "en-US"
    update, _ = parse_update({"payload": "yes"})
    assert update.locale is None
    for bad in (5, "", "x" * 36, "рус"):
        with pytest.raises(BadUpdate) as caught:
            parse_update({"text": "hi", "user_locale": bad})
        assert caught.value.path == "update.user_locale"
