"""Personal data through real webhooks: masked transcripts, erasure of one user, retention per bot."""
from __future__ import annotations

import asyncio
import json
import time

import pytest
from sqlalchemy import text

from server.runtime.retention import Retention
from server.runtime.stores.base import TurnCommit
from server.runtime.stores.redis import RedisStore
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.privacy_support import leftovers
from tests.integration.runtime_app import Harness, msg, running, serving, texts
from tests.integration.runtime_support import redis_prefix, sqlite_url  # noqa: F401
from tests.unit.test_masking import FLOW

BOT = "privbot"
PHONE, EMAIL = "+7 916 123-45-67", "ivan.petrov@example.com"


@pytest.fixture(params=["redis", "sql"])


async def harness(request, fake_max: FakeMax) -> Harness:  # noqa: F811
    async with serving(request, request.param, fake_max.url, BOT, FLOW) as h:
        yield h


async def stored_timeline(h: Harness, bot: str) -> str:
    """Every timeline record of the bot as stored (Redis: moved to the database and still in the stream)."""
    store = h.runtime.store
    parts: list[str] = []
    engine = store.timeline_db if isinstance(store, RedisStore) else store.engine
    async with engine.connect() as conn:
        parts += [r for (r,) in await conn.execute(text("SELECT record FROM runtime_timeline WHERE bot_id = :b"),
                                                    {"b": bot})]
    if isinstance(store, RedisStore):
        for _, fields in await store.client.call("XRANGE", store.keys.timeline, "-", "+"):
            if fields[1].decode().startswith(bot + "|"):
                parts.append(fields[3].decode())
    return "\n".join(parts)


def texts_of(records: str) -> str:
    """The strings inside stored records, one per line: a timestamp's digits are not a leaked phone number."""
    def strings(value: object) -> list[str]:
        if isinstance(value, str):
            return [value]
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        return [s for item in items for s in strings(item)]
    return "\n".join(s for line in records.splitlines() for s in strings(json.loads(line)))


async def talk(h: Harness, user: int, *answers: str) -> None:
    for answer in ["/start", *answers]:
        assert (await h.deliver(BOT, msg(user, answer))).status_code == 200


async def test_masked_values_never_reach_the_stored_transcript(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    changed = await harness.api("PATCH", f"/api/bots/{BOT}", json={"mask_inputs": ["phone"], "mask_keys": ["email"]})
    assert changed.status_code == 200
    assert (changed.json()["mask_inputs"], changed.json()["mask_keys"]) == (["phone"], ["email"])
    await talk(harness, 501, PHONE, "not-an-email", EMAIL)
    # The running dialog keeps the real values (the bot needs them); the user sees their own reply.
    session = (await harness.api("GET", f"/api/bots/{BOT}/users/501/session")).json()
    assert session["data"] == {"phone": "+79161234567", "email": EMAIL}
    assert "Записали +79161234567. Почта?" in texts(fake_max, 501)
    await talk(harness, 502, "+79990001122")  # another dialog, for the record
    await harness.deliver(BOT, msg(501, "Москва"))
    await harness.runtime.store.move_timeline()
    stored = texts_of(await stored_timeline(harness, BOT))
    assert "Москва" in stored, "unmasked answers stay readable"
    for secret in ("916", "123-45", "79161234567", "ivan.petrov", "not-an-email", "9990001122"):
        assert secret not in stored, f"{secret!r} reached the stored transcript"
    shown = [e["text"] for e in (await harness.api("GET", f"/api/bots/{BOT}/users/501/timeline")).json()]
    assert "+* *** ***-**-67" in shown and "i***@example.com" in shown
    assert "Готово, Москва: +*********67, i***@example.com" in shown


async def test_privacy_settings_are_checked_and_audited(harness: Harness) -> None:
    bot = (await harness.api("GET", f"/api/bots/{BOT}")).json()
    assert (bot["retention_days"], bot["mask_keys"], bot["mask_inputs"]) == (30, [], [])
    for body, path in [({"retention_days": 0}, "retention_days"), ({"retention_days": 10**40}, "retention_days"),
                       ({"retention_days": True}, "retention_days"), ({"retention_days": "30"}, "retention_days"),
                       ({"mask_keys": ["1st"]}, "mask_keys"), ({"mask_keys": "email"}, "mask_keys"),
                       ({"mask_keys": ["x" * 65]}, "mask_keys"), ({"mask_inputs": ["fax"]}, "mask_inputs"),
                       ({"mask_inputs": [None]}, "mask_inputs")]:
        refused = await harness.api("PATCH", f"/api/bots/{BOT}", json=body)
        assert refused.status_code == 422, body
        assert [d["path"] for d in refused.json()["details"]] == [path] and refused.json()["message"]
    ok = await harness.api("PATCH", f"/api/bots/{BOT}", json={"retention_days": 7, "mask_inputs": ["email", "phone"]})
    assert ok.status_code == 200 and ok.json()["mask_inputs"] == ["phone", "email"]
    entry = (await harness.api("GET", "/api/audit")).json()[0]
    assert entry["action"] == "bot.update"
    assert entry["details"]["retention_days"] == {"from": 30, "to": 7}
    assert entry["details"]["mask_inputs"] == {"from": [], "to": ["phone", "email"]}


async def test_erasure_leaves_nothing_of_the_user(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    await talk(harness, 601, PHONE)
    await talk(harness, 602, PHONE)
    await harness.runtime.store.move_timeline()
    await harness.deliver(BOT, msg(601, "not-an-email"))  # on Redis: one record still in the stream
    store = harness.runtime.store
    assert await leftovers(store, BOT, "601")
    gone = await harness.api("DELETE", f"/api/bots/{BOT}/users/601")
    assert gone.status_code == 204
    assert await leftovers(store, BOT, "601") == []
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/601/session")).status_code == 404
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/601/timeline")).json() == []
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/602/session")).json()["state"] == "ask_email"
    entry = (await harness.api("GET", "/api/audit")).json()[0]
    assert (entry["action"], entry["target"], entry["details"]["user"]) == ("bot.user_erase", f"bot:{BOT}", "601")
    assert entry["details"]["erased"]["dialog"] == 1 and entry["details"]["erased"]["timeline"] == 3
    assert (await harness.api("DELETE", f"/api/bots/{BOT}/users/601")).status_code == 204, "erasing again is fine"
    # The user may come back: a new dialog starts from scratch.
    await harness.deliver(BOT, msg(601, "/start"))
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/601/session")).json()["data"] == {}


async def test_erasure_refuses_odd_ids_and_unknown_bots(harness: Harness) -> None:
    assert (await harness.api("DELETE", "/api/bots/nosuchbot/users/1")).status_code == 404
    assert (await harness.api("DELETE", "/api/bots/NO%20SUCH/users/1")).status_code == 404
    for odd in ("abc", "0", "-1", "007", "1.5", "9" * 30, str(2**63), "%D9%A3", "1%20"):
        refused = await harness.api("DELETE", f"/api/bots/{BOT}/users/{odd}")
        assert refused.status_code == 400, odd
        assert refused.json()["error"] == "invalid_user_id" and "MAX user id" in refused.json()["message"]
    nul = await harness.api("DELETE", f"/api/bots/{BOT}/users/%00")  # refused before it reaches the route
    assert nul.status_code == 400 and nul.json()["message"]


async def test_erasure_waits_for_a_turn_in_flight_and_removes_its_write(harness: Harness) -> None:
    await talk(harness, 701)
    dispatcher = harness.runtime.dispatcher
    async with dispatcher.opened(BOT, "701") as turn:
        erasing = asyncio.create_task(harness.api("DELETE", f"/api/bots/{BOT}/users/701"))
        done, _ = await asyncio.wait({erasing}, timeout=0.3)
        assert not done, "erasure must wait for the user's turn in flight"
        stored = dict(turn.loaded.dialog)
        stored["data"] = {"phone": "+79161234567"}
        await dispatcher.commit(turn, TurnCommit(stored, timeline={"t": time.time(), "e": [["event", None, None, "x"]],
                                                              "s": None}))
    assert (await erasing).status_code == 204
    assert await leftovers(harness.runtime.store, BOT, "701") == []


async def test_retention_deletes_old_transcripts_and_keeps_the_dialogs(harness: Harness) -> None:
    other = "keepbot"
    await harness.bot(other)
    await harness.publish(other, {**FLOW, "id": "reg2"})
    await harness.api("PATCH", f"/api/bots/{BOT}", json={"retention_days": 1})
    await talk(harness, 801, PHONE)
    await harness.deliver(other, msg(801, "/start"))
    await harness.runtime.store.move_timeline()
    await harness.deliver(BOT, msg(801, "not-an-email"))  # on Redis: still in the stream
    assert await stored_timeline(harness, BOT)
    now = time.time()
    # Two days on, the bot's one-day transcripts are past their time; the other bot keeps 30 days.
    later = Retention(harness.runtime.store, harness.app.state.db.sessionmaker, clock=lambda: now + 2 * 86_400)
    assert await later.pass_once() == 3
    assert await stored_timeline(harness, BOT) == ""
    assert len(await harness.runtime.store.timeline(other, "801")) == 1
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/801/session")).json()["state"] == "ask_email"
    assert await later.pass_once() == 0


async def test_erasure_while_redis_is_unreachable_is_a_503_and_a_retry_finishes_it(
        sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    from tests.integration.runtime_support import TcpProxy

    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with TcpProxy() as proxy, running(sqlite_url, fake_max.url, proxy.url) as h:
        await h.bot(BOT)
        await h.publish(BOT, FLOW)
        await talk(h, 901, PHONE)
        await proxy.stop()
        refused = await h.api("DELETE", f"/api/bots/{BOT}/users/901")
        assert refused.status_code == 503 and "retry" in refused.json()["message"]
        audit = (await h.api("GET", "/api/audit")).json()
        assert "bot.user_erase" not in [e["action"] for e in audit], "nothing is recorded as erased"
        await proxy.start()
        assert (await h.api("DELETE", f"/api/bots/{BOT}/users/901")).status_code == 204
        assert await leftovers(h.runtime.store, BOT, "901") == []
