"""Every update shape in tests/data/max/ through the real webhook route, on Redis and on the SQL stores: the
answer, what reached the fake MAX (each body valid by the official schema) and what was ignored, and why."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from server import metrics
from server.channels.max.fake.schema import problems
from tests.fakemax import FAKE_TOKEN, FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, serving
from tests.integration.runtime_support import pg_fresh_url, redis_prefix, sqlite_url  # noqa: F401 (fixtures)

BOT = "shapebot"
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "max"
ASK, ERROR = "Как вас зовут?", "Напишите имя текстом."
SKIPPED = "Хорошо, без имени."
FLOW = {
    "format": "botflow/v1", "id": "shapes", "title": "Shapes", "start": "ask",
    "states": [
        {"id": "ask", "say": [{"text": ASK, "buttons": [[{"text": "Пропустить", "payload": "skip"}]]}],
         "input": {"type": "text", "save_as": "name", "error": ERROR}, "after_press": "replace"},
        {"id": "done", "final": True, "say": [{"text": "Спасибо, {name}!"}]},
        {"id": "skipped", "final": True, "say": [{"text": SKIPPED}]},
    ],
    "transitions": [
        {"id": "skip", "from": "ask", "to": "skipped", "on": "button", "payload": "skip"},
        {"id": "named", "from": "ask", "to": "done", "on": "input"},
    ],
}
PRESSED = {"message": {"text": ASK + "\n\n✓ Пропустить", "attachments": [], "link": None}}

# fixture: (replies expected after the user's dialog is open at "ask", the press answer or None, why ignored)
EXPECTED: dict[str, tuple[list[str], dict[str, Any] | None, str | None]] = {
    "message_created-text": (["Спасибо, Тест!"], None, None),
    "message_created-no_attachments_field": (["Спасибо, Анна!"], None, None),
    "message_created-reply": (["Спасибо, Мария!"], None, None),
    "message_created-partial_user": (["Спасибо, Олег!"], None, None),
    "message_created-unknown_fields": (["Спасибо, Ирина!"], None, None),
    "message_created-image_with_caption": (["Спасибо, Светлана!"], None, None),
    "message_created-forward_only": ([ERROR], None, None),
    "message_created-sticker": ([ERROR], None, None),
    "message_created-audio_with_transcription": ([ERROR], None, None),
    "message_created-file": ([ERROR], None, None),
    "message_created-share": ([ERROR], None, None),
    "message_created-location": ([ERROR], None, None),
    "message_created-contact": ([ERROR], None, None),
    "message_created-voice_without_message": ([], None, "no_message"),
    "message_created-channel_post": ([], None, "group"),
    "message_created-group_chat": ([], None, "group"),
    "message_created-from_bot": ([], None, "from_bot"),
    "message_callback-pressed": ([SKIPPED], PRESSED, None),
    "message_callback-partial_user": ([SKIPPED], PRESSED, None),
    "message_callback-message_deleted": ([SKIPPED], {}, None),
    "message_callback-group_chat": ([], None, "group"),
    "bot_started-deep_link": ([ASK], None, None),
    "bot_started-partial_user": ([ASK], None, None),
    **{name: ([], None, "unused_type") for name in (
        "message_edited", "message_removed", "bot_added", "bot_removed", "bot_stopped", "user_added", "user_removed",
        "chat_title_changed", "message_chat_created", "dialog_muted", "dialog_unmuted", "dialog_cleared",
        "dialog_removed", "bot_admin_permissions_changed", "unknown_update_type")},
}


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def user_of(update: dict[str, Any]) -> int | None:
    """The user a fixture comes from, if any (the sender, the presser, or the update's user)."""
    message = update.get("message") or {}
    for found in ((update.get("callback") or {}).get("user"), message.get("sender"), update.get("user")):
        if isinstance(found, dict) and isinstance(found.get("user_id"), int) and not found.get("is_bot"):
            return found["user_id"]
    return None


def where(update: dict[str, Any], user: int) -> dict[str, str]:
    """Where the replies to a fixture must go: the dialog it came from, else the user's own dialog."""
    recipient = (update.get("message") or {}).get("recipient") or {}
    chat = recipient.get("chat_id", update.get("chat_id"))
    return {"chat_id": str(chat)} if isinstance(chat, int) else {"user_id": str(user)}


def ignored_count(reason: str) -> float:
    return metrics.UPDATES_IGNORED.labels(bot=BOT, reason=reason)._value.get()


def test_every_fixture_has_an_expectation_and_every_update_type_a_fixture() -> None:
    names = {path.stem for path in FIXTURES.glob("*.json")}
    assert names == set(EXPECTED)
    kinds = {load(name)["update_type"] for name in names}
    schema_types = {"message_created", "message_callback", "message_edited", "message_removed", "bot_added",
                    "bot_removed", "user_added", "user_removed", "bot_started", "bot_stopped", "dialog_cleared",
                    "dialog_removed", "dialog_muted", "dialog_unmuted", "chat_title_changed", "message_chat_created"}
    assert schema_types <= kinds


@pytest.mark.parametrize("backend", ["redis", "sqlite", "postgres"])
async def test_every_shape_gets_200_and_exactly_its_replies(request, backend: str, fake_max: FakeMax,  # noqa: F811
                                                            subtests) -> None:
    async with serving(request, backend, fake_max.url, BOT, FLOW) as harness:
        for name, (replies, answer, reason) in EXPECTED.items():
            with subtests.test(fixture=name):
                await check_one(harness, fake_max, name, replies, answer, reason)


async def check_one(harness: Harness, fake: FakeMax, name: str, replies: list[str], answer: dict[str, Any] | None,
                    reason: str | None) -> None:
    update = load(name)
    user = user_of(update)
    if user is not None:  # the user's dialog waits at "ask" (a deep link of its own, so never a duplicate)
        opened = {"update_type": "bot_started", "timestamp": 1_000 + user, "chat_id": user + 1_000_000,
                  "user": {"user_id": user, "first_name": "U", "is_bot": False}}
        assert (await harness.deliver(BOT, opened)).status_code == 200
    before, counted = len(fake.calls), ignored_count(reason) if reason else 0.0
    answered = await harness.deliver(BOT, update)
    assert (answered.status_code, answered.json()) == (200, {"ok": True})
    calls = fake.calls[before:]
    sent = [c for c in calls if c["path"] == "/messages"]
    answers = [c for c in calls if c["path"] == "/answers"]
    assert [c["json"]["text"] for c in sent] == replies
    for call in sent:
        assert problems("NewMessageBody", call["json"]) == []
        assert call["query"] == where(update, user), "a reply goes to the dialog its update came from"
        assert not call["query"].get("chat_id", "").startswith("-"), "nothing is ever sent into a group"
    if answer is None:
        assert answers == []
    else:
        assert [a["json"] for a in answers] == [answer]
        assert problems("CallbackAnswer", answers[0]["json"]) == []
    if reason:
        assert ignored_count(reason) == counted + 1


async def test_a_user_writing_in_a_group_is_still_answered_in_private(request, fake_max: FakeMax) -> None:  # noqa: F811
    async with serving(request, "sqlite", fake_max.url, BOT, FLOW) as harness:
        user = 21001
        assert (await harness.deliver(BOT, msg(user, "/start"))).status_code == 200
        in_group = load("message_created-group_chat")
        in_group["message"]["sender"]["user_id"] = user
        in_group["message"]["body"]["mid"] = "mid.group-of-21001"
        assert (await harness.deliver(BOT, in_group)).status_code == 200
        assert (await harness.deliver(BOT, msg(user, "Вера"))).status_code == 200
        sent = [(c["query"], c["json"]["text"]) for c in fake_max.calls if c["path"] == "/messages"]
        private = {"chat_id": str(user + 1_000_000)}
        assert sent == [(private, ASK), (private, "Спасибо, Вера!")]


async def test_the_fake_emits_every_shape_and_each_is_acknowledged(request, fake_max: FakeMax) -> None:  # noqa: F811
    from server.channels.max.client import MaxClient
    from server.channels.max.fake.shapes import SHAPES

    async with serving(request, "sqlite", fake_max.url, BOT, FLOW) as harness:
        for n, shape in enumerate(SHAPES):
            fake_max.emit(shape, 31000 + n)
        async with MaxClient(fake_max.url, rate=None) as client:
            page = await client.get_updates(FAKE_TOKEN, timeout=0)
        assert len(page["updates"]) == len(SHAPES)
        for update in page["updates"]:
            answered = await harness.deliver(BOT, update)
            assert answered.status_code == 200, (update["update_type"], answered.text)
        sent = [c for c in fake_max.calls if c["path"] == "/messages"]
        assert sent and all(problems("NewMessageBody", c["json"]) == [] for c in sent)
        assert not any(c["query"].get("chat_id", "").startswith("-") for c in sent)
