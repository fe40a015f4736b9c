"""The simulator over HTTP: the engine on sandbox dialogs, the idle clock, versions as a source."""
from __future__ import annotations

from tests.integration.api_helpers import create_flow, flow_doc, freeze


def timed_doc(flow_id: str = "timed") -> dict:
    """One waiting state with a reminder at 60 s and a timeout at 120 s, then a final state."""
    return {
        "format": "botflow/v1", "id": flow_id, "title": "Timed", "start": "wait",
        "settings": {"session_ttl": 3600, "reminder": {"after": 60, "text": "Still there?"}},
        "states": [
            {"id": "wait", "say": [{"text": "Say something", "buttons": [[{"text": "Done", "payload": "done"}]]}]},
            {"id": "late", "final": True, "say": [{"text": "Too late"}]},
            {"id": "paid", "final": True, "say": [{"text": "Paid {amount}"}]},
            {"id": "fine", "final": True, "say": [{"text": "Fine"}]},
        ],
        "transitions": [
            {"id": "t_paid", "from": "wait", "to": "paid", "on": "event", "name": "payment"},
            {"id": "t_done", "from": "wait", "to": "fine", "on": "button", "payload": "done"},
            {"id": "t_late", "from": "wait", "to": "late", "on": "timeout", "after": 120},
        ],
    }


async def sim(client, headers, flow_id, update, session="s1", source=None):
    body = {"session": session, "update": update}
    if source is not None:
        body["source"] = source
    response = await client.post(f"/api/flows/{flow_id}/simulate", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_registration_dialog(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    opened = await sim(app_client, admin_headers, "reg", {"bot_started": None})
    assert opened["state"] == "ask_name"
    assert opened["replies"][0]["text"] == "Привет! Как вас зовут?" and opened["replies"][0]["buttons"] == []
    named = await sim(app_client, admin_headers, "reg", {"text": "Иван"})
    assert named["state"] == "ask_phone" and named["data"]["name"] == "Иван"
    assert named["fired"]["transition"] == "name_ok" and named["fired"]["reason"]
    bad = await sim(app_client, admin_headers, "reg", {"text": "12"})
    assert bad["state"] == "ask_phone" and bad["fired"]["transition"] is None
    assert bad["replies"][0]["text"] == "Невалидный телефон. Повторите."
    await sim(app_client, admin_headers, "reg", {"text": "8 (912) 345-67-89"})
    asked = await sim(app_client, admin_headers, "reg", {"text": "ivan@example.com"})
    assert asked["state"] == "ask_pdn"
    assert asked["replies"][0]["buttons"] == [[{"text": "Да", "payload": "yes"}, {"text": "Нет", "payload": "no"}]]
    done = await sim(app_client, admin_headers, "reg", {"payload": "yes"})
    assert done["state"] is None and done["fired"]["transition"] == "pdn_yes_button"
    assert done["replies"][0]["text"] == "Готово! Имя: Иван, телефон: +79123456789"
    # Another sandbox id is another dialog.
    other = await sim(app_client, admin_headers, "reg", {"text": "hello"}, session="s2")
    assert other["state"] == "ask_name"


async def test_idle_fires_reminder_then_timeout(app_client, admin_headers):
    await create_flow(app_client, admin_headers, timed_doc())
    await sim(app_client, admin_headers, "timed", {"text": "hi"})
    reminded = await sim(app_client, admin_headers, "timed", {"idle": 61})
    assert reminded["state"] == "wait" and [r["text"] for r in reminded["replies"]] == ["Still there?"]
    timed_out = await sim(app_client, admin_headers, "timed", {"idle": 60})
    assert timed_out["state"] is None and timed_out["fired"]["transition"] == "t_late"
    assert [r["text"] for r in timed_out["replies"]] == ["Too late"]

    await sim(app_client, admin_headers, "timed", {"text": "hi"}, session="jump")
    both = await sim(app_client, admin_headers, "timed", {"idle": 500}, session="jump")
    assert [r["text"] for r in both["replies"]] == ["Still there?", "Too late"]


async def test_events_and_attachments(app_client, admin_headers):
    await create_flow(app_client, admin_headers, timed_doc())
    await sim(app_client, admin_headers, "timed", {"text": "hi"})
    nothing = await sim(app_client, admin_headers, "timed", {"event": "refund", "payload": {}})
    assert nothing["state"] == "wait" and nothing["fired"]["transition"] is None and nothing["replies"] == []
    caption = await sim(app_client, admin_headers, "timed",
                        {"attachment": {"type": "image", "payload": {"url": "https://x/y.png"}}, "text": "look"})
    assert caption["state"] == "wait"
    paid = await sim(app_client, admin_headers, "timed", {"event": "payment", "payload": {"amount": 100}})
    assert paid["state"] is None and paid["fired"]["transition"] == "t_paid"
    assert paid["replies"][0]["text"] == "Paid 100"


async def test_source_version_and_draft(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    await freeze(app_client, admin_headers, "reg")
    draft = await app_client.get("/api/flows/reg", headers=admin_headers)
    document = draft.json()
    document["states"][0]["say"][0]["text"] = "Draft greeting"
    await app_client.put("/api/flows/reg", json=document, headers={**admin_headers, "If-Match": draft.headers["etag"]})
    from_version = await sim(app_client, admin_headers, "reg", {"bot_started": ""}, session="v", source=1)
    assert from_version["replies"][0]["text"] == "Привет! Как вас зовут?"
    from_draft = await sim(app_client, admin_headers, "reg", {"bot_started": ""}, session="d", source="draft")
    assert from_draft["replies"][0]["text"] == "Draft greeting"


async def test_bad_simulator_requests(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    cases = [
        ({"session": "s", "update": {}}, 422),
        ({"session": "s", "update": {"text": 5}}, 422),
        ({"session": "s", "update": {"text": "a", "payload": "b"}}, 422),
        ({"session": "s", "update": {"idle": -1}}, 422),
        ({"session": "s", "update": {"idle": 1e300}}, 422),
        ({"session": "s", "update": {"idle": True}}, 422),
        ({"session": "s", "update": {"event": "x", "payload": [1]}}, 422),
        ({"session": "s", "update": {"attachment": "img"}}, 422),
        ({"session": "", "update": {"text": "a"}}, 422),
        ({"session": "s", "update": {"text": "a"}, "source": 9}, 404),
        ({"session": "s", "update": {"text": "a"}, "source": "latest"}, 422),
        ({"update": {"text": "a"}}, 422),
    ]
    for body, status in cases:
        response = await app_client.post("/api/flows/reg/simulate", json=body, headers=admin_headers)
        assert response.status_code == status, (body, response.text)
        assert response.json()["message"]
    missing = await app_client.post("/api/flows/ghost/simulate", json={"session": "s", "update": {"text": "a"}},
                                    headers=admin_headers)
    assert missing.status_code == 404
