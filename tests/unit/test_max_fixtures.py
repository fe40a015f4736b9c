"""The update fixtures are what the official schema describes, except the shapes real MAX sends beyond it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.channels.max.fake.schema import problems

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "max"
# Sent by real MAX (max-bot-api.md) though the schema does not allow them: each must still get a 200.
BEYOND_SCHEMA = {
    "message_created-voice_without_message": '"message" is a required property',
    "message_created-forward_only": "null is not of type",
    "message_created-no_attachments_field": '"attachments" is a required property',
    "message_created-partial_user": '"first_name" is a required property',
    "message_callback-partial_user": '"first_name" is a required property',
    "bot_started-partial_user": '"first_name" is a required property',
    "bot_added": '"user" is a required property',
    "bot_admin_permissions_changed": "is not one of",
    "unknown_update_type": "is not one of",
}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_a_fixture_is_valid_by_the_schema_unless_real_max_goes_beyond_it(path: Path) -> None:
    found = problems("Update", json.loads(path.read_text(encoding="utf-8")))
    if path.stem in BEYOND_SCHEMA:
        assert found and BEYOND_SCHEMA[path.stem] in found[0]
    else:
        assert found == []


def test_the_schema_refuses_what_it_should() -> None:
    assert problems("Update", {"update_type": "message_created"})  # no timestamp, no message
    assert problems("NewMessageBody", {"text": "x" * 4001, "attachments": [], "link": None})
    assert problems("NewMessageBody", {"text": "x", "attachments": [{"type": "inline_keyboard", "payload": {
        "buttons": [[{"type": "callback", "text": "x" * 129, "payload": "p"}]]}}], "link": None})
    assert problems("SubscriptionRequestBody", {"url": "https://a.example/x", "secret": "bad secret"})
    assert not problems("SubscriptionRequestBody", {"url": "https://a.example/x", "secret": "good_secret-1"})
