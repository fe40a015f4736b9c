"""The designer's button editor: payload, link, and the contact/location request buttons round-trip."""
from __future__ import annotations

import pytest

from web.form_state import BUTTON_KINDS, button_document, button_values


@pytest.mark.parametrize("stored, shown", [
    ({"text": "Да", "payload": "yes"}, {"text": "Да", "kind": "payload", "value": "yes"}),
    ({"text": "Сайт", "url": "https://ex.ru"}, {"text": "Сайт", "kind": "url", "value": "https://ex.ru"}),
    ({"text": "Отправить телефон", "request": "contact"}, {"text": "Отправить телефон", "kind": "contact", "value": ""}),
    ({"text": "Где вы?", "request": "location"}, {"text": "Где вы?", "kind": "location", "value": ""}),
])
def test_a_button_reads_into_the_form_and_back_unchanged(stored: dict, shown: dict) -> None:
    assert button_values(stored) == shown
    assert button_document(shown) == stored
    assert shown["kind"] in BUTTON_KINDS


def test_a_request_button_drops_a_leftover_payload() -> None:
    assert button_document({"text": "Phone", "kind": "contact", "value": "old"}) == {"text": "Phone",
                                                                                      "request": "contact"}
