"""Replay of live dialogs recorded through real webhooks: exactly the dialogs a change affects are found."""
from __future__ import annotations

import copy

import pytest

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, press, registration, serving
from tests.integration.runtime_support import pg_fresh_url, redis_prefix, sqlite_url  # noqa: F401 (fixtures)

BOT = "replaybot"


@pytest.fixture(params=["redis", "sqlite", "postgres"])
async def harness(request, fake_max: FakeMax) -> Harness:  # noqa: F811
    async with serving(request, request.param, fake_max.url, BOT, registration()) as h:
        yield h


async def save_draft(harness: Harness, change) -> None:
    draft = await harness.api("GET", "/api/flows/registration")
    document = copy.deepcopy(draft.json())
    change(document)
    saved = await harness.api("PUT", "/api/flows/registration", json=document,
                              headers={"If-Match": draft.headers["etag"]})
    assert saved.status_code == 200, saved.text


async def test_replay_finds_exactly_the_dialogs_a_change_affects(harness: Harness) -> None:
    dialogs = {
        7001: [msg(7001, "/start"), msg(7001, "Иван"), msg(7001, "+79991234567"), msg(7001, "a@b.ru"),
               press(7001, "yes")],
        7002: [msg(7002, "/start"), msg(7002, "Анна"), msg(7002, "/cancel")],
        7003: [msg(7003, "/start"), msg(7003, "Олег")],
        7004: [msg(7004, "/start"), msg(7004, "Пётр"), msg(7004, "89990000000"), msg(7004, "p@q.ru"),
               msg(7004, "нет")],
    }
    for updates in dialogs.values():
        for update in updates:
            assert (await harness.deliver(BOT, update)).status_code == 200
    same = await harness.api("POST", f"/api/bots/{BOT}/replay", json={"source": 1})
    assert same.status_code == 200, same.text
    assert same.json()["dialogs"] == 4 and same.json()["differ"] == 0

    # A changed text: every dialog that entered ask_email differs, at the step that entered it.
    await save_draft(harness, lambda d: d["states"][2]["say"][0].update(text="Ваш email, пожалуйста"))
    text_change = (await harness.api("POST", f"/api/bots/{BOT}/replay", json={"source": "draft"})).json()
    assert text_change["differ"] == 2 and sorted(d["user"] for d in text_change["differing"]) == ["7001", "7004"]
    [group] = text_change["groups"]
    assert {k: group[k] for k in ("state", "expected_transition", "actual_transition", "count")} == {
        "state": "ask_phone", "expected_transition": "phone_ok", "actual_transition": "phone_ok", "count": 2}
    assert sorted(group["users"]) == ["7001", "7004"]
    first = text_change["differing"][0]["divergence"]
    assert first["step"] == 2 and first["differs"] == ["replies"]
    assert first["expected"]["replies"] == ["Введите email"] and first["actual"]["replies"] == ["Ваш email, пожалуйста"]

    # A changed transition as well: the refusal now confirms, which only 7004 reaches.
    def retarget(d):
        d["states"][2]["say"][0]["text"] = "Введите email"
        next(t for t in d["transitions"] if t["id"] == "pdn_no")["to"] = "confirmed"
    await save_draft(harness, retarget)
    moved = (await harness.api("POST", f"/api/bots/{BOT}/replay", json={"last": 10})).json()
    assert moved["dialogs"] == 4 and moved["differ"] == 1
    assert moved["groups"][0]["state"] == "ask_pdn" and moved["groups"][0]["users"] == ["7004"]
    found = moved["differing"][0]
    assert found["divergence"]["differs"] == ["replies"] and found["divergence"]["step"] == 4

    # One click: the differing dialog becomes a saved test; it passes on the version and fails on the draft.
    saved = await harness.api("PUT", "/api/flows/registration/tests", json={"tests": [found["test"]]},
                              headers={"If-Match": '"t0"'})
    assert saved.status_code == 200, saved.text
    on_version = (await harness.api("POST", "/api/flows/registration/tests/run", json={"source": 1})).json()
    assert on_version["passed"] == 1, on_version["results"]
    on_draft = (await harness.api("POST", "/api/flows/registration/tests/run", json={})).json()
    assert on_draft["failed"] == 1 and on_draft["results"][0]["failure"]["step"] == 4

    named = (await harness.api("POST", f"/api/bots/{BOT}/replay", json={"users": ["7001", "7003"]})).json()
    assert named["dialogs"] == 2 and named["differ"] == 0
    bad = await harness.api("POST", f"/api/bots/{BOT}/replay", json={"since": "yesterday"})
    assert bad.status_code == 422 and bad.json()["details"][0]["path"] == "since"
