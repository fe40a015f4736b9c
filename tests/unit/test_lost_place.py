"""`settings.lost_place`: the text a user gets when the dialog store lost their running dialog."""
from __future__ import annotations

from test_load import base, details_of

from flows.load import load
from flows.model import DEFAULT_LOST_PLACE


def test_a_flow_without_it_says_the_russian_default() -> None:
    assert load(base()).settings.lost_place == DEFAULT_LOST_PLACE
    assert DEFAULT_LOST_PLACE == "Извините, мы потеряли ваше место в диалоге. Начнём заново."


def test_a_flow_may_say_its_own() -> None:
    doc = base()
    doc["settings"]["lost_place"] = "Простите, начнём сначала."
    assert load(doc).settings.lost_place == "Простите, начнём сначала."


def test_it_is_translated_like_every_text_the_bot_sends() -> None:
    doc = base()
    doc["languages"] = ["ru", "en"]
    doc["settings"]["lost_place"] = {"ru": "Начнём сначала.", "en": "Let us start again."}
    assert load(doc).settings.lost_place == "Начнём сначала."


def test_a_lost_place_that_is_not_text_is_refused_by_its_path() -> None:
    doc = base()
    doc["settings"]["lost_place"] = 5
    details = details_of(doc)
    assert any(d["path"] == "settings.lost_place" for d in details), details
