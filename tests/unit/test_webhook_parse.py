"""A MAX delivery's fields of the wrong kind are refused with a sentence naming the field."""
from __future__ import annotations

from typing import Any

import msgspec
import pytest

from server.runtime.webhook import BadUpdate, not_json, parse_max_update, secret_ok

USER = {"user_id": 77, "name": "Ann"}


def started(**fields: Any) -> dict[str, Any]:
    return {"update_type": "bot_started", "timestamp": 1, "chat_id": 5, "user": USER, **fields}


def message(user_id: Any) -> dict[str, Any]:
    return {"update_type": "message_created", "timestamp": 1,
            "message": {"sender": {"user_id": user_id}, "recipient": {"chat_id": 5},
                        "body": {"mid": "mid.1", "text": "hi"}}}


@pytest.mark.parametrize(("raw", "words"), [
    (started(payload={"a": 1}), "payload must be a string"),
    (started(payload=12), "payload must be a string"),
    ({"update_type": 5}, "update_type must be a string"),
    ({"timestamp": 1}, "update_type is missing"),
    (message(0), "positive integer user id"),
    (message(-1), "positive integer user id"),
    (message(2 ** 70), "positive integer user id"),
    (message("77"), "positive integer user id"),
    ({**message(77), "message": {"sender": USER, "body": {"mid": 5}}}, "mid must be a string"),
    ({"update_type": "message_callback", "callback": {"user": USER, "callback_id": ["x"]}},
     "callback_id must be a string"),
    (started(chat_id=2 ** 64), "chat_id must be a 64-bit chat id"),
    ({**message(77), "message": {"sender": USER, "recipient": {"chat_id": -2 ** 63 - 1}, "body": {"mid": "m"}}},
     "message.recipient.chat_id must be a 64-bit chat id"),
    ({**message(77), "message": {"sender": USER, "body": {"mid": "m" * 1025}}}, "mid is 1,025 characters long"),
])
def test_fields_of_the_wrong_kind_are_named(raw: dict[str, Any], words: str) -> None:
    with pytest.raises(BadUpdate) as caught:
        parse_max_update(raw)
    assert words in str(caught.value)


@pytest.mark.parametrize(("payload", "stored"), [("deep-link data", "deep-link data"), ("", None), (None, None)])
def test_a_deep_link_payload_is_text_or_nothing(payload: str | None, stored: str | None) -> None:
    incoming = parse_max_update(started(payload=payload))
    assert incoming is not None and incoming.user == "77" and incoming.update.start_payload == stored


def test_the_largest_user_id_is_taken() -> None:
    incoming = parse_max_update(message(2 ** 63 - 1))
    assert incoming is not None and incoming.user == str(2 ** 63 - 1)


def test_the_widest_chat_ids_are_taken() -> None:
    assert parse_max_update(started(chat_id=2 ** 63 - 1)).chat_id == 2 ** 63 - 1
    assert parse_max_update(started(chat_id=-2 ** 63)).chat_id == -2 ** 63


@pytest.mark.parametrize(("raw", "words"), [
    (b'{"a": NaN}', "it holds NaN, which is not a JSON number"),
    (b'{"a": -Infinity}', "it holds -Infinity"),
    (b'{"a": 1e400}', "the number 1e400, too large to read"),
    (b"\xef\xbb\xbf{}", "byte order mark"),
    ("{}".encode("utf-16"), "it is not UTF-8 (byte 0xff at offset 0)"),
    (b'{"a": "\\ud800"}', "unpaired surrogate escape"),
    (b"", "it is empty"),
])
def test_why_a_body_is_not_json_is_said_rightly(raw: bytes, words: str) -> None:
    with pytest.raises(msgspec.DecodeError) as refused:
        msgspec.json.decode(raw)
    assert words in not_json(raw, refused.value)


def test_the_secret_header_is_compared_without_the_spaces_around_it() -> None:
    assert secret_ok("whsecret_ABC", "whsecret_ABC \t") and secret_ok("whsecret_ABC", " whsecret_ABC")
    assert not secret_ok("whsecret_ABC", "whsecret_AB C") and not secret_ok("whsecret_ABC", "")
    assert not secret_ok(None, "x") and not secret_ok("", "") and not secret_ok("x", None)
