"""External events, webhook actions and looking back at a dialog through the inspection routes."""
from __future__ import annotations

from typing import Any

import pytest

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, running, texts
from tests.integration.runtime_support import REDIS_URL, Receiver, redis_prefix, sqlite_url  # noqa: F401

BOT = "paybot"


def payment_flow(hook_url: str) -> dict[str, Any]:
    return {
        "format": "botflow/v1", "id": "pay", "title": "Pay", "start": "ask_name",
        "states": [{"id": "ask_name", "say": [{"text": "Имя?"}], "input": {"type": "text", "save_as": "name"}},
                   {"id": "wait_pay", "say": [{"text": "Ждём оплату, {name}"}]},
                   {"id": "paid", "final": True, "say": [{"text": "Оплачено {amount}"}]}],
        "transitions": [
            {"id": "named", "from": "ask_name", "to": "wait_pay", "on": "input"},
            {"id": "on_paid", "from": "wait_pay", "to": "paid", "on": "event", "name": "paid",
             "if": [{"var": "amount", "op": "ge", "value": 100}], "set": {"status": "paid"},
             "actions": [{"type": "webhook", "url": hook_url}]}],
    }


@pytest.fixture(params=["redis", "sql"])
async def harness(request, sqlite_url: str, fake_max: FakeMax, monkeypatch) -> Harness:  # noqa: F811
    redis_url = None
    if request.param == "redis":
        monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", request.getfixturevalue("redis_prefix"))
        redis_url = REDIS_URL
    # The receiver stands for an on-premises CRM on this machine, which the deployment allows explicitly.
    async with running(sqlite_url, fake_max.url, redis_url, action_allow=("127.0.0.1",)) as h:
        await h.bot(BOT)
        yield h


async def test_an_action_to_an_internal_address_is_never_posted(sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    from server import metrics

    blocked = metrics.ACTIONS.labels(result="blocked")
    before = blocked._value.get()
    with Receiver() as crm:
        async with running(sqlite_url, fake_max.url, None) as h:
            await h.bot(BOT)
            await h.publish(BOT, payment_flow(crm.url))
            await h.deliver(BOT, msg(9100, "hi"))
            await h.deliver(BOT, msg(9100, "Иван"))
            taken = await h.api("POST", f"/api/bots/{BOT}/users/9100/events",
                                json={"name": "paid", "payload": {"amount": 150}})
            assert taken.status_code == 200
            await fake_max.wait_for(lambda _: blocked._value.get() > before, timeout=10)
    assert crm.bodies == [] and crm.attempts == 0


async def test_events_fire_or_are_refused_and_actions_are_posted(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    with Receiver(fail_first=1) as crm:
        await harness.publish(BOT, payment_flow(crm.url))
        user = 9001
        events = f"/api/bots/{BOT}/users/{user}/events"
        missing = await harness.api("POST", f"/api/bots/{BOT}/users/424242/events", json={"name": "paid"})
        assert missing.status_code == 404
        await harness.deliver(BOT, msg(user, "hi"))
        await harness.deliver(BOT, msg(user, "Иван"))
        refused = await harness.api("POST", events, json={"name": "paid", "payload": {"amount": 50}})
        assert refused.status_code == 409 and refused.json()["error"] == "event_not_accepted"
        session = (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).json()
        assert session["data"] == {"name": "Иван"}  # nothing changed
        unknown = await harness.api("POST", events, json={"name": "shipped"})
        assert unknown.status_code == 409 and "'shipped' is not taken" in unknown.json()["message"]
        # A transition would take it, but its payload would grow the data past the bound: refused, and said so.
        too_big = await harness.api("POST", events, json={"name": "paid", "payload": {"amount": 150, "note": "x" * 70_000}})
        assert too_big.status_code == 409 and too_big.json()["error"] == "event_not_accepted"
        assert "64 KiB" in too_big.json()["message"]
        assert (await harness.api("GET", f"/api/bots/{BOT}/users/{user}/session")).json()["data"] == {"name": "Иван"}
        for body, path in (({"name": 5}, "name"), ({"name": "paid", "payload": [1]}, "payload"),
                           ({"name": "paid", "amount": 150}, "amount"), ({"name": " "}, "name"), ([], "")):
            malformed = await harness.api("POST", events, json=body)
            assert malformed.status_code == 422, body
            assert [d["path"] for d in malformed.json()["details"]] == [path], malformed.json()
        huge = await harness.api("POST", events, json={"name": "paid", "payload": {"amount": 2 ** 64}})
        assert huge.status_code == 422 and huge.json()["details"][0]["path"] == "payload.amount"
        plain = await harness.api("POST", events, content=b'{"name": "paid"}', headers={"Content-Type": "text/plain"})
        assert plain.status_code == 415
        named = await harness.api("POST", events, json={"name": "p" * 5000})
        assert named.status_code == 422 and len(named.text) < 1000
        taken = await harness.api("POST", events, json={"name": "paid", "payload": {"amount": 150}})
        assert taken.status_code == 200
        assert taken.json()["state"] is None and taken.json()["fired"]["transition"] == "on_paid"
        assert texts(fake_max, user)[-1] == "Оплачено 150"
        await fake_max.wait_for(lambda _: crm.bodies, timeout=10)  # refused once, retried with backoff
    assert crm.bodies == [{"name": "Иван", "amount": 150, "status": "paid"}]
    assert crm.attempts == 2


async def test_events_need_the_editor_role(harness: Harness) -> None:
    made = await harness.api("POST", "/api/users", json={"username": "watcher", "role": "viewer",
                                                          "password": "a-long-password-1"})
    assert made.status_code == 201
    token = made.json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    denied = await harness.client.post(f"/api/bots/{BOT}/users/1/events", json={"name": "x"}, headers=headers)
    assert denied.status_code == 403
    anonymous = await harness.client.post(f"/api/bots/{BOT}/users/1/events", json={"name": "x"})
    assert anonymous.status_code == 401


async def test_the_dialog_as_of_each_timeline_entry(harness: Harness) -> None:
    await harness.publish(BOT, payment_flow("http://127.0.0.1:9/unused"))
    user = 9002
    await harness.deliver(BOT, msg(user, "hi"))
    await harness.deliver(BOT, msg(user, "Иван"))
    base = f"/api/bots/{BOT}/users/{user}"
    entries = (await harness.api("GET", base + "/timeline")).json()
    assert [(e["kind"], e["state"]) for e in entries] == [
        ("message", None), ("opened", "ask_name"), ("reply", "ask_name"),
        ("message", "ask_name"), ("transition", "wait_pay"), ("reply", "wait_pay")]
    assert all(set(e) == {"time", "kind", "state", "transition", "text"} for e in entries)
    before = (await harness.api("GET", base + "/timeline/3/state")).json()
    assert before["entry"]["text"] == "Иван"
    assert (before["session"]["state"], before["session"]["data"]) == ("ask_name", {})
    for odd in ("abc", "", "1.5"):  # said in words, with the parameter named
        refused = await harness.api("GET", base + f"/session?at={odd}")
        assert refused.status_code == 400, odd
        assert refused.json()["message"] == "Check the request: the query parameter 'at' must be a whole number."
        assert refused.json()["details"] == [{"path": "at", "message": "must be a whole number"}]
    after = (await harness.api("GET", base + "/session?at=4")).json()
    assert (after["state"], after["data"], after["version"]) == ("wait_pay", {"name": "Иван"}, 1)
    assert (await harness.api("GET", base + "/timeline/0/state")).json()["session"] is None
    assert (await harness.api("GET", base + "/timeline/99/state")).status_code == 404
