"""The runtime against http-api.md ("Runtime") and max-bot-api.md, through the webhook and a fake MAX server."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from server.app import create_app
from server.settings import Settings
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import ADMIN_TOKEN, Harness, lifespan, msg, press, registration, running, started
from tests.integration.runtime_support import REDIS_URL, redis_prefix, sqlite_url  # noqa: F401

BOT = "confbot"


@pytest.fixture(params=["redis", "sqlite"])
async def harness(request, fake_max: FakeMax, monkeypatch) -> Harness:  # noqa: F811
    redis_url = None
    if request.param == "redis":
        monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", request.getfixturevalue("redis_prefix"))
        redis_url = REDIS_URL
    async with running(request.getfixturevalue("sqlite_url"), fake_max.url, redis_url) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        h.backend = request.param  # type: ignore[attr-defined]
        yield h


async def test_readiness_checks_redis_when_configured(harness: Harness) -> None:
    ready = await harness.client.get("/readyz")
    assert ready.status_code == 200
    checks = ready.json()["checks"]
    assert checks["database"] == "ok"
    assert ("redis" in checks) == (harness.backend == "redis")  # type: ignore[attr-defined]


async def test_a_press_is_answered_with_only_set_fields_and_replies_go_to_its_chat(
        harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    user, chat = 7001, 99_000_001
    for text in ("/start", "Иван", "+79991234567", "ivan@example.com"):
        assert (await harness.deliver(BOT, msg(user, text, chat=chat))).status_code == 200
    assert (await harness.deliver(BOT, press(user, "yes", callback_id="cb-7001", chat=chat))).status_code == 200
    answers = fake_max.requests("POST", "/answers")
    # Nothing set, nothing sent: a null message or notification would be one MAX applies.
    assert [(a["query"], a["json"]) for a in answers] == [({"callback_id": "cb-7001"}, {})]
    sent = fake_max.requests("POST", "/messages")
    assert sent and all(call["query"] == {"chat_id": str(chat)} for call in sent)
    assert sent[-1]["json"]["text"] == "Готово! Имя: Иван, телефон: +79991234567"
    keyboard = sent[-2]["json"]["attachments"][0]
    assert keyboard["type"] == "inline_keyboard"
    assert keyboard["payload"]["buttons"] == [[{"type": "callback", "text": "Да", "payload": "yes"},
                                               {"type": "callback", "text": "Нет", "payload": "no"}]]


@pytest.mark.parametrize("payload", [None, "", "absent"])
async def test_bot_started_without_payload_stores_no_start_payload(harness: Harness, payload) -> None:
    user = 7002
    update = started(user, None if payload == "absent" else payload)
    if payload == "absent":
        del update["payload"]
    assert (await harness.deliver(BOT, update)).status_code == 200
    session = (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).json()
    assert session["state"] == "ask_name" and session["data"] == {}
    assert isinstance(session["version"], int)


async def test_unknown_update_types_are_accepted_and_ignored(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    for kind in ("bot_stopped", "bot_added", "user_added", "chat_title_changed", "dialog_cleared",
                 "message_edited", "something_new"):
        response = await harness.deliver(BOT, {"update_type": kind, "timestamp": 1, "chat_id": 5,
                                              "user": {"user_id": 5, "first_name": "A", "is_bot": False}})
        assert response.status_code == 200, (kind, response.text)
    assert fake_max.requests("POST", "/messages") == []


async def test_outgoing_calls_keep_under_the_per_bot_rate(sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    """"Outgoing calls keep under a per-bot rate (default 30 requests/s, configurable)": as MAX counts them,
    no one-second window holds more calls than the rate, however many users write at once."""
    rate = 30
    app = create_app(Settings(database_url=sqlite_url, max_api_url=fake_max.url, bootstrap_token=ADMIN_TOKEN,
                              max_rate=rate))
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://botflow.test", timeout=60) as client:
            h = Harness(app, client)
            await h.bot(BOT)
            await h.publish(BOT, registration())
            await asyncio.gather(*(h.deliver(BOT, msg(8000 + n, "/start")) for n in range(3 * rate)))
    times = sorted(call["time"] for call in fake_max.requests("POST", "/messages"))
    assert len(times) == 3 * rate
    busiest = max(sum(1 for t in times if start <= t <= start + 1.0) for start in times)
    assert busiest <= rate, f"{busiest} calls within one second at a rate of {rate}/s"


@pytest.mark.parametrize("ttl", [31_536_000, 31_536_000.0])
async def test_the_longest_session_ttl_still_serves(harness: Harness, fake_max: FakeMax, ttl) -> None:  # noqa: F811
    """session_ttl may be up to a year ("Limits" in flow-format.md); such a document must run on every store,
    and a longer one is refused when it is saved."""
    too_long = registration()
    too_long["id"] = "too_long"
    too_long["settings"] = {**too_long["settings"], "session_ttl": ttl + 1}
    refused = await harness.api("POST", "/api/flows", json=too_long)
    assert refused.status_code == 422 and any(d["path"] == "settings.session_ttl" for d in refused.json()["details"])
    document = registration()
    document["id"] = "forever"
    document["settings"] = {**document["settings"], "session_ttl": ttl}
    document["transitions"].append({"id": "slow", "from": "ask_phone", "to": "ask_name", "on": "timeout",
                                    "after": ttl // 2 if isinstance(ttl, int) else ttl / 2})
    await harness.publish(BOT, document)
    assert (await harness.deliver(BOT, msg(7003, "/start"))).status_code == 200
    assert (await harness.deliver(BOT, msg(7003, "Иван"))).status_code == 200
    session = (await harness.api("GET", f"/api/bots/{BOT}/users/7003/session")).json()
    assert (session["flow"], session["state"]) == ("forever", "ask_phone")
    document["title"] = "Forever, again"
    version = await harness.publish(BOT, document, sessions="migrate")
    moved = (await harness.api("GET", f"/api/bots/{BOT}/users/7003/session")).json()
    assert (moved["version"], moved["state"], moved["data"]) == (version, "ask_phone", {"name": "Иван"})
