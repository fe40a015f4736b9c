"""The simulator beyond one step at a time: step back to an earlier step, start anywhere with data."""
from __future__ import annotations

from tests.integration.api_helpers import create_flow, flow_doc
from tests.integration.test_api_simulate import sim, timed_doc


async def put_dialog(client, headers, flow_id, body, session="s1"):
    return await client.put(f"/api/flows/{flow_id}/simulate/{session}", json=body, headers=headers)


async def test_step_back_restores_state_data_history_attempts_and_clock(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    await sim(app_client, admin_headers, "reg", {"text": "/start"})
    named = await sim(app_client, admin_headers, "reg", {"text": "Иван"})
    assert named["session"]["history"] == ["ask_name"]
    bad = await sim(app_client, admin_headers, "reg", {"text": "12"})
    assert bad["session"]["attempts"] == 1
    await sim(app_client, admin_headers, "reg", {"text": "+79123456789"})
    # Back to the step after the name: phone not given yet, no invalid attempt, the clock as it was.
    back = await put_dialog(app_client, admin_headers, "reg", {"dialog": named["session"], "now": named["now"]})
    assert back.status_code == 200, back.text
    assert back.json()["state"] == "ask_phone" and back.json()["data"] == {"name": "Иван"}
    assert back.json()["session"]["attempts"] == 0 and back.json()["now"] == named["now"]
    again = await sim(app_client, admin_headers, "reg", {"text": "8 900 000 00 00"})
    assert again["state"] == "ask_email" and again["data"] == {"name": "Иван", "phone": "+79000000000"}
    assert again["session"]["history"] == ["ask_name", "ask_phone"]


async def test_step_back_also_rewinds_timers(app_client, admin_headers):
    await create_flow(app_client, admin_headers, timed_doc())
    opened = await sim(app_client, admin_headers, "timed", {"text": "hi"})
    late = await sim(app_client, admin_headers, "timed", {"idle": 200})
    assert late["state"] is None and late["replies"][-1]["text"] == "Too late"
    await put_dialog(app_client, admin_headers, "timed", {"dialog": opened["session"], "now": opened["now"]})
    reminded = await sim(app_client, admin_headers, "timed", {"idle": 61})
    assert [r["text"] for r in reminded["replies"]] == ["Still there?"] and reminded["state"] == "wait"


async def test_start_anywhere_with_data_and_the_keys_a_state_reads(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    reads = await app_client.get("/api/flows/reg/simulate/reads?state=ask_pdn", headers=admin_headers)
    assert reads.status_code == 200 and reads.json()["keys"] == ["name", "phone"]
    started = await put_dialog(app_client, admin_headers, "reg",
                               {"dialog": {"state": "ask_pdn", "data": {"name": "Ann", "phone": "+79990000000"}}})
    assert started.status_code == 200, started.text
    assert started.json()["state"] == "ask_pdn" and started.json()["replies"][0]["buttons"]
    assert started.json()["live_payloads"] == ["/back", "/cancel", "/help", "/start", "back", "no", "yes", "назад", "отмена"]
    done = await sim(app_client, admin_headers, "reg", {"payload": "yes"})
    assert done["replies"][0]["text"] == "Готово! Имя: Ann, телефон: +79990000000"
    missing = await put_dialog(app_client, admin_headers, "reg", {"dialog": {"state": "nowhere"}})
    assert missing.status_code == 422 and missing.json()["details"][0]["path"] == "dialog.state"
    assert (await put_dialog(app_client, admin_headers, "reg", {"dialog": {"state": "ask_pdn", "data": 3}})
            ).status_code == 422
    assert (await put_dialog(app_client, admin_headers, "reg", {"dialog": None})).json()["state"] is None
    assert (await app_client.get("/api/flows/reg/simulate/reads?state=zzz", headers=admin_headers)).status_code == 404
