"""Formatted messages and pictures over MAX: `format` sent, users' values escaped, a picture by link, and an
uploaded picture uploaded once per bot through /uploads, its `attachment.not.ready` answer retried.
On Redis and on the SQL store (SQLite, PostgreSQL), against the fake MAX."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.channels.max.fake.schema import problems
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, running
from tests.integration.runtime_support import pg_fresh_url, redis_prefix, sqlite_url  # noqa: F401 (fixtures)

BOT = "picbot"
PICTURE = (Path(__file__).resolve().parents[1] / "data" / "picture.png").read_bytes()
CAT = "https://cdn.example.com/cat.png"


def flow(upload_id: str) -> dict[str, Any]:
    return {"format": "botflow/v1", "id": "pictures", "start": "ask",
            "states": [
                {"id": "ask", "say": [{"text": "Как вас *зовут*?", "format": "markdown"}],
                 "input": {"type": "text", "save_as": "name"}},
                {"id": "done", "final": True, "say": [
                    {"text": "<b>{name}</b>, готово", "format": "html"},
                    {"text": "", "image": CAT, "buttons": [[{"text": "Ещё", "payload": "more"}]]},
                    {"text": "Ваш **кот**, {name}", "format": "markdown", "upload": upload_id}]}],
            "transitions": [{"from": "ask", "to": "done", "on": "input"}]}


@pytest.fixture(params=["redis", "sqlite", "postgres"])
async def harness(request, fake_max: FakeMax) -> Harness:  # noqa: F811
    from tests.integration.runtime_support import REDIS_URL

    redis_url = None
    if request.param == "redis":
        request.getfixturevalue("monkeypatch").setenv("BOTFLOW_REDIS_PREFIX", request.getfixturevalue("redis_prefix"))
        redis_url = REDIS_URL
    database = request.getfixturevalue("pg_fresh_url" if request.param == "postgres" else "sqlite_url")
    async with running(database, fake_max.url, redis_url) as h:
        await h.bot(BOT)
        made = await h.api("POST", "/api/uploads?filename=cat.png", content=PICTURE)
        assert made.status_code == 201, made.text
        h.upload = made.json()["id"]  # type: ignore[attr-defined]
        h.version = await h.publish(BOT, flow(h.upload))  # type: ignore[attr-defined]
        yield h


def bodies(fake: FakeMax, user: int) -> list[dict[str, Any]]:
    return fake.sent_messages(chat_id=user + 1_000_000)


async def test_format_escaping_and_pictures_reach_max(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.uploads.not_ready_for = 0.4  # the first send after the upload is refused as not ready
    user = 7101
    await harness.deliver(BOT, msg(user, "/start"))
    await harness.deliver(BOT, msg(user, "<i>Ann</i> *x*"))
    sent = await fake_max.wait_for(lambda f: len(bodies(f, user)) == 4 and bodies(f, user), timeout=20)
    # NewMessageBody requires text, attachments and link (null): the official clients send them so.
    assert sent[0] == {"text": "Как вас *зовут*?", "format": "markdown", "attachments": [], "link": None}
    assert sent[1] == {"text": "<b>&lt;i&gt;Ann&lt;/i&gt; *x*</b>, готово", "format": "html", "attachments": [],
                       "link": None}
    assert sent[2] == {"text": "", "link": None, "attachments": [
        {"type": "image", "payload": {"url": CAT}},
        {"type": "inline_keyboard", "payload": {"buttons": [[{"type": "callback", "text": "Ещё",
                                                               "payload": "more"}]]}}]}
    assert [r["type"] for r in fake_max.uploads.received] == ["image"]
    token = fake_max.uploads.received[0]["token"]
    assert sent[3] == {"text": r"Ваш **кот**, <i>Ann</i> \*x\*", "format": "markdown", "link": None,
                       "attachments": [{"type": "image", "payload": {"token": token}}]}
    # Every body sent (refused ones too) is one the official schema allows, and so is every answer of the
    # fake's upload routes: they speak real MAX.
    posted = [c for c in fake_max.calls if c["path"] == "/messages"]
    assert all(problems("NewMessageBody", c["json"]) == [] for c in posted)
    refused = [c for c in posted if c["status"] == 400]
    assert refused and all(c["response"]["code"] == "attachment.not.ready" for c in refused)
    assert all(problems("Error", c["response"]) == [] for c in refused)
    uploads = [c for c in fake_max.calls if c["path"] == "/uploads"]
    assert [(c["query"], c["status"]) for c in uploads] == [({"type": "image"}, 200)]
    assert problems("UploadEndpoint", uploads[0]["response"]) == []
    received = [c for c in fake_max.calls if c["path"] == "/upload/"]
    assert [c["status"] for c in received] == [200] and problems("PhotoTokens", received[0]["response"]) == []
    entries = (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/timeline")).json()
    looks = [(e["text"], e.get("format"), e.get("image"), e.get("upload")) for e in entries if e["kind"] == "reply"]
    assert looks[-3:] == [("<b>&lt;i&gt;Ann&lt;/i&gt; *x*</b>, готово", "html", None, None), ("", None, CAT, None),
                          (r"Ваш **кот**, <i>Ann</i> \*x\*", "markdown", None, harness.upload)]  # type: ignore[attr-defined]
    transcript = (await harness.api("GET", f"/bots/{BOT}/dialogs/{user}")).text
    assert '<div class="tr-text" data-markup="html">&lt;b&gt;&amp;lt;i&amp;gt;Ann' in transcript
    assert f'<img class="mx-picture" src="/api/uploads/{harness.upload}"' in transcript  # type: ignore[attr-defined]
    assert f'<img class="mx-picture" src="{CAT}"' in transcript


async def test_the_token_is_reused_for_every_later_message_of_the_bot(harness: Harness,
                                                                      fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.uploads.not_ready_for = 0.0
    for user in (7201, 7202):
        await harness.deliver(BOT, msg(user, "/start"))
        await harness.deliver(BOT, msg(user, "Кот"))
        await fake_max.wait_for(lambda f, user=user: len(bodies(f, user)) == 4, timeout=20)
    tokens = {bodies(fake_max, user)[3]["attachments"][0]["payload"]["token"] for user in (7201, 7202)}
    assert len(fake_max.uploads.received) == 1 and tokens == {fake_max.uploads.received[0]["token"]}
    assert len([c for c in fake_max.calls if c["path"] == "/uploads"]) == 1
