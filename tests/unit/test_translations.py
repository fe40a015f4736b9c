"""Editing translations: the default language's flat view for the forms, and putting edits back."""
from __future__ import annotations

import copy

import pytest

from flows.load import load
from flows.translations import flat, restore, rows, set_text


def doc() -> dict:
    return {"format": "botflow/v1", "id": "x", "start": "a", "languages": ["ru", "en"],
            "states": [{"id": "a", "say": [{"text": {"ru": "Привет", "en": "Hi"}}, {"text": "Второе"}],
                        "input": {"type": "choice", "choices": {"ru": ["Да", "Нет"], "en": ["Yes", "No"]}}}]}


def test_the_flat_view_holds_default_strings_and_loads() -> None:
    view = flat(doc())
    assert view["states"][0]["say"] == [{"text": "Привет"}, {"text": "Второе"}]
    assert view["states"][0]["input"]["choices"] == ["Да", "Нет"]
    load(view)


def test_an_unchanged_form_post_gives_back_the_document() -> None:
    assert restore(doc(), flat(doc())) == doc()


def test_an_edited_default_text_keeps_its_translations() -> None:
    view = flat(doc())
    view["states"][0]["say"][0]["text"] = "Здравствуйте"
    assert restore(doc(), view)["states"][0]["say"][0]["text"] == {"ru": "Здравствуйте", "en": "Hi"}


def test_removing_a_message_moves_translations_with_their_texts() -> None:
    original = doc()
    original["states"][0]["say"][1]["text"] = {"ru": "Второе", "en": "Second"}
    view = flat(original)
    view["states"][0]["say"].pop(0)
    assert restore(original, view)["states"][0]["say"] == [{"text": {"ru": "Второе", "en": "Second"}}]
    view = flat(original)
    view["states"][0]["say"].pop(1)
    assert restore(original, view)["states"][0]["say"] == [{"text": {"ru": "Привет", "en": "Hi"}}]


def test_a_removed_translated_message_leaves_no_translation_behind() -> None:
    view = flat(doc())
    view["states"][0]["say"].pop(0)
    assert restore(doc(), view)["states"][0]["say"] == [{"text": "Второе"}]


def test_longer_default_choices_fill_the_other_languages_with_the_defaults_entries() -> None:
    view = flat(doc())
    view["states"][0]["input"]["choices"] = ["Да", "Нет", "Не знаю"]
    restored = restore(doc(), view)
    assert restored["states"][0]["input"]["choices"] == {"ru": ["Да", "Нет", "Не знаю"], "en": ["Yes", "No", "Не знаю"]}
    load(restored)


def test_dropping_languages_drops_their_texts() -> None:
    view = flat(doc())
    view["languages"] = ["ru"]
    restored = restore(doc(), view)
    assert restored["states"][0]["say"][0]["text"] == "Привет"
    del view["languages"]
    assert restore(doc(), view)["states"][0]["say"][0]["text"] == "Привет"
    load(restore(doc(), view))


def test_set_text_sets_and_clears_one_language() -> None:
    changed = set_text(doc(), "states[0].say[1].text", "en", "Second")
    assert changed["states"][0]["say"][1]["text"] == {"ru": "Второе", "en": "Second"}
    cleared = set_text(changed, "states[0].say[0].text", "en", "")
    assert cleared["states"][0]["say"][0]["text"] == "Привет"
    before = copy.deepcopy(doc())
    set_text(before, "states[0].say[1].text", "en", "Second")
    assert before == doc()  # the given document is never changed
    with pytest.raises(KeyError):
        set_text(doc(), "states[5].say[0].text", "en", "x")


def test_rows_mark_what_is_missing() -> None:
    table = {row["path"]: row for row in rows(doc())}
    assert table["states[0].say[1].text"]["missing"] == ["en"]
    assert table["states[0].input.choices"]["texts"] == {"ru": "Да\nНет", "en": "Yes\nNo"}
