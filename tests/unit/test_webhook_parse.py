"""A MAX delivery is read whatever its shape: what the runtime cannot use is ignored with a reason, never refused."""
from __future__ import annotations

from typing import Any

import msgspec
import pytest

from server.channels.base import BadUpdate, Ignored, Incoming
from server.channels.max.updates import parse_update as parse_max_update
from server.runtime.webhook import not_json, secret_ok

USER = {"user_id": 77, "name": "Ann"}


def started(**fields: Any) -> dict[str, Any]:
    return {"update_type": "bot_started", "timestamp": 1, "chat_id": 5, "user": USER, **fields}


def message(user_id: Any, chat_type: Any = "dialog", **fields: Any) -> dict[str, Any]:
    return {"update_type": "message_created", "timestamp": 1,
            "message": {"sender": {"user_id": user_id}, "recipient": {"chat_id": 5, "chat_type": chat_type},
                        "body": {"mid": "mid.1", "text": "hi"}, **fields}}


@pytest.mark.parametrize(("raw", "reason"), [
    (started(payload={"a": 1}), None),  # a payload that is not text is no payload
    ({"update_type": 5}, "unreadable"),
    ({"timestamp": 1}, "unreadable"),
    ({"update_type": "message_edited", "timestamp": 1}, "unused_type"),
    ({"update_type": "something_new", "timestamp": 1, "whatever": [1]}, "unused_type"),
    (message(0), "unreadable"),
    (message(-1), "unreadable"),
    (message(2 ** 70), "unreadable"),
    (message("77"), "unreadable"),
    ({"update_type": "message_created", "timestamp": 1}, "no_message"),
    ({"update_type": "message_created", "timestamp": 1, "message": None}, "no_message"),
    (message(77, sender=None), "no_sender"),
    (message(77, "channel", sender=None), "group"),
    (message(77, sender={"user_id": 5, "is_bot": True}), "from_bot"),
    (message(77, "chat"), "group"),
    (message(77, "channel"), "group"),
    (message(77, None), "group"),
    ({**message(77), "message": {"sender": USER, "recipient": {"chat_type": "dialog"}, "body": {"mid": 5}}},
     "unreadable"),
    ({"update_type": "message_callback", "callback": {"user": USER, "callback_id": ["x"]}, "message": None},
     "unreadable"),
    ({"update_type": "message_callback", "callback": {"callback_id": "c"}, "message": None}, "no_sender"),
    ({"update_type": "message_callback", "callback": {"user": USER, "callback_id": "c", "payload": "p"},
      "message": {"recipient": {"chat_id": -5, "chat_type": "chat"}}}, "group"),
    ({"update_type": "bot_started", "timestamp": 1, "chat_id": 5}, "no_sender"),
    ({**message(77), "message": {"sender": USER, "recipient": {"chat_type": "dialog"},
                                 "body": {"mid": "m" * 1025}}}, "unreadable"),
])
def test_what_cannot_be_used_is_ignored_with_a_reason(raw: dict[str, Any], reason: str | None) -> None:
    parsed = parse_max_update(raw)
    if reason is None:
        assert isinstance(parsed, Incoming)
    else:
        assert parsed == Ignored(reason)


def test_only_a_body_that_is_not_an_object_is_refused() -> None:
    for raw in ([], "x", 5, None):
        with pytest.raises(BadUpdate):
            parse_max_update(raw)


@pytest.mark.parametrize(("payload", "stored"), [("deep-link data", "deep-link data"), ("", None), (None, None)])
def test_a_deep_link_payload_is_text_or_nothing(payload: str | None, stored: str | None) -> None:
    incoming = parse_max_update(started(payload=payload))
    assert isinstance(incoming, Incoming) and incoming.user == "77" and incoming.update.start_payload == stored


def test_the_largest_user_id_is_taken() -> None:
    incoming = parse_max_update(message(2 ** 63 - 1))
    assert isinstance(incoming, Incoming) and incoming.user == str(2 ** 63 - 1)


def test_the_widest_chat_ids_are_taken_and_wider_ones_are_none() -> None:
    assert parse_max_update(started(chat_id=2 ** 63 - 1)).chat_id == 2 ** 63 - 1
    assert parse_max_update(started(chat_id=-2 ** 63)).chat_id == -2 ** 63
    assert parse_max_update(started(chat_id=2 ** 64)).chat_id is None  # replies then go by user id


def test_a_forward_without_a_body_is_a_message_with_a_forward_and_no_text() -> None:
    raw = message(77, body=None, link={"type": "forward", "message": {"mid": "x", "text": "elsewhere"}},
                  timestamp=1785182044286)
    incoming = parse_max_update(raw)
    assert isinstance(incoming, Incoming)
    assert incoming.update.text is None and incoming.update.attachments == [{"type": "forward"}]
    assert incoming.dedupe == "t:1785182044286"


def test_keyboards_are_not_content_and_unknown_attachments_are_kept() -> None:
    raw = message(77)
    raw["message"]["body"]["attachments"] = [{"type": "inline_keyboard", "payload": {}}, {"type": "sticker"}, "junk"]
    assert parse_max_update(raw).update.attachments == [{"type": "sticker"}]


def test_the_user_locale_is_carried() -> None:
    assert parse_max_update({**message(77), "user_locale": "ru"}).update.locale == "ru"
    assert parse_max_update({**message(77), "user_locale": 5}).update.locale is None


def test_a_press_carries_what_its_answer_needs_to_edit_the_message() -> None:
    keyboard = {"type": "inline_keyboard", "payload": {"buttons": [[{"type": "callback", "text": "Да", "payload": "y"},
                                                                    {"type": "callback", "text": "Нет", "payload": "n"}]]}}
    raw = {"update_type": "message_callback", "timestamp": 2,
           "callback": {"timestamp": 2, "callback_id": "cb", "payload": "n", "user": USER},
           "message": {"recipient": {"chat_id": 5, "chat_type": "dialog"},
                       "body": {"mid": "m", "text": "Готово?", "attachments": [keyboard]}}}
    incoming = parse_max_update(raw)
    assert incoming.pressed == {"text": "Готово?", "label": "Нет", "attachments": []}
    assert incoming.chat_id == 5 and incoming.callback_id == "cb"
    raw["message"] = None  # the message was deleted meanwhile: the press still counts, in the presser's dialog
    gone = parse_max_update(raw)
    assert gone.pressed is None and gone.chat_id is None and gone.update.payload == "n"


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
