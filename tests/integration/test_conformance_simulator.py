"""The simulator route against http-api.md ("Simulator") and flow-format.md ("Edge cases"), from outside."""
from __future__ import annotations

import uuid
from typing import Any

from litestar.testing import AsyncTestClient

from tests.integration.api_helpers import create_flow

FLOW: dict[str, Any] = {
    "format": "botflow/v1", "id": "conf", "title": "Conformance", "start": "ask",
    "settings": {"session_ttl": 600, "reminder": {"after": 30, "text": "Still there, {name}?",
                                                  "buttons": [[{"text": "Go on", "payload": "go"}]]}},
    "commands": {"restart": None},
    "states": [
        {"id": "ask", "say": [{"text": "Name?", "buttons": [[{"text": "Skip", "payload": "skip"}]]}],
         "input": {"type": "text", "save_as": "name", "error": "Again"}},
        {"id": "wait", "say": [{"text": "Waiting, {name}"}]},
        {"id": "paid", "final": True, "say": [{"text": "Paid {amount}"}]},
        {"id": "late", "final": True, "say": [{"text": "Too late"}]},
    ],
    "transitions": [
        {"id": "named", "from": "ask", "to": "wait", "on": "input"},
        {"id": "pay", "from": "wait", "to": "paid", "on": "event", "name": "payment",
         "if": [{"var": "amount", "op": "ge", "value": 100}]},
        {"id": "slow", "from": "wait", "to": "late", "on": "timeout", "after": 30},
        {"id": "any", "from": "wait", "to": "wait", "on": "else"},
    ],
}


class Sandbox:
    def __init__(self, client: AsyncTestClient, headers: dict[str, str]) -> None:
        self.client, self.headers, self.session = client, headers, uuid.uuid4().hex

    async def __call__(self, update: dict[str, Any]) -> dict[str, Any]:
        response = await self.client.post("/api/flows/conf/simulate", headers=self.headers, json={
            "session": self.session, "update": update, "source": "draft"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert {"state", "data", "replies", "fired"} <= set(body)
        assert set(body["fired"]) >= {"transition", "reason"} and isinstance(body["fired"]["reason"], str)
        for reply in body["replies"]:
            assert set(reply) == {"text", "buttons"}
        return body


async def sandbox(client: AsyncTestClient, headers: dict[str, str]) -> Sandbox:
    await create_flow(client, headers, FLOW)
    return Sandbox(client, headers)


async def test_bot_started_payload_variants(app_client: AsyncTestClient, admin_headers) -> None:
    sim = await sandbox(app_client, admin_headers)
    opened = await sim({"bot_started": "promo"})
    assert opened["state"] == "ask" and opened["data"] == {"start_payload": "promo"}
    # During a dialog bot_started restarts it, even with `restart` disabled, and without a reply.
    for empty in ("", None):
        again = await sim({"bot_started": empty})
        assert again["state"] == "ask" and again["data"] == {}
        assert [r["text"] for r in again["replies"]] == ["Name?"]


async def test_event_nobody_takes_changes_nothing_timers_included(app_client: AsyncTestClient,
                                                                  admin_headers) -> None:
    sim = await sandbox(app_client, admin_headers)
    await sim({"text": "hi"})
    await sim({"text": "Ann"})
    await sim({"idle": 20})
    refused = await sim({"event": "payment", "payload": {"amount": 5}})
    assert refused["fired"]["transition"] is None and refused["replies"] == []
    assert refused["state"] == "wait" and "amount" not in refused["data"]
    # The clock did not restart: the timeout entered at 0 falls due at 30 (with the reminder: only it fires).
    late = await sim({"idle": 11})
    assert late["fired"]["transition"] == "slow" and late["state"] is None
    assert [r["text"] for r in late["replies"]] == ["Too late"]


async def test_event_payload_is_merged_before_if(app_client: AsyncTestClient, admin_headers) -> None:
    sim = await sandbox(app_client, admin_headers)
    await sim({"text": "hi"})
    await sim({"text": "Ann"})
    paid = await sim({"event": "payment", "payload": {"amount": "150"}})
    assert paid["fired"]["transition"] == "pay" and paid["state"] is None
    assert [r["text"] for r in paid["replies"]] == ["Paid 150"]


async def test_buttons_in_an_input_state(app_client: AsyncTestClient, admin_headers) -> None:
    sim = await sandbox(app_client, admin_headers)
    await sim({"text": "hi"})
    stale = await sim({"payload": "elsewhere"})
    assert stale["state"] == "ask" and "name" not in stale["data"]
    assert [r["text"] for r in stale["replies"]] == ["Не понял. Повторите, пожалуйста.", "Name?"]
    own = await sim({"payload": "skip"})
    assert own["state"] == "wait" and own["data"]["name"] == "skip"


async def test_reminder_buttons_count_as_the_state_s_own(app_client: AsyncTestClient, admin_headers) -> None:
    sim = await sandbox(app_client, admin_headers)
    await sim({"text": "hi"})
    reminded = await sim({"idle": 31})
    assert reminded["replies"] == [{"text": "Still there, ?", "buttons": [[{"text": "Go on", "payload": "go"}]]}]
    pressed = await sim({"payload": "go"})
    assert pressed["state"] == "wait" and pressed["data"]["name"] == "go"


async def test_attachment_with_caption_and_idle_without_dialog(app_client: AsyncTestClient,
                                                               admin_headers) -> None:
    sim = await sandbox(app_client, admin_headers)
    nothing = await sim({"idle": 5})
    assert nothing["state"] is None and nothing["replies"] == [] and nothing["fired"]["transition"] is None
    await sim({"text": "hi"})
    captioned = await sim({"attachment": {"type": "image", "payload": {"url": "https://x/1.png"}}, "text": " Bo "})
    assert captioned["state"] == "wait" and captioned["data"]["name"] == "Bo"
