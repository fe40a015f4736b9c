"""The flows page: a new flow starts empty or from one of the examples; a bad choice gets a sentence."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


async def signed_in_page(client, headers) -> dict[str, str]:
    await client.get("/flows", headers=headers)
    return {**headers, "HX-Request": "true", "X-CSRFToken": client.cookies.get("csrftoken", "")}


async def test_the_new_flow_form_offers_every_example(app_client, admin_headers) -> None:
    page = await app_client.get("/flows", headers={**admin_headers, "Accept-Language": "ru"})
    for path in (ROOT / "examples").glob("*.json"):
        title = json.loads(path.read_text(encoding="utf-8"))["title"]
        assert f'<option value="{path.stem}">примера «{title}»</option>' in page.text
    english = await app_client.get("/flows", headers={**admin_headers, "Accept-Language": "en"})
    assert '<option value="booking">the example “Salon booking” (its bot speaks Russian)</option>' in english.text
    assert english.text.count("(its bot speaks Russian)") == len(list((ROOT / "examples").glob("*.json")))


async def test_a_flow_started_from_an_example_is_the_example_under_the_new_id(app_client, admin_headers) -> None:
    headers = await signed_in_page(app_client, admin_headers)
    made = await app_client.post("/flows", data={"id": "my_orders", "title": "", "example": "order"}, headers=headers)
    assert made.headers.get("hx-redirect") == "/flows/my_orders/edit", made.text  # htmx goes to the editor
    draft = (await app_client.get("/api/flows/my_orders", headers=admin_headers)).json()
    example = json.loads((ROOT / "examples" / "order.json").read_text(encoding="utf-8"))
    assert draft["id"] == "my_orders" and draft["title"] == example["title"]
    assert [s["id"] for s in draft["states"]] == [s["id"] for s in example["states"]]
    assert len(draft["transitions"]) == len(example["transitions"])
    named = await app_client.post("/flows", data={"id": "second", "title": "Мой заказ", "example": "order"},
                                  headers=headers)
    assert named.headers.get("hx-redirect") == "/flows/second/edit", named.text
    assert (await app_client.get("/api/flows/second", headers=admin_headers)).json()["title"] == "Мой заказ"


async def test_an_example_that_is_not_offered_is_refused_in_words(app_client, admin_headers) -> None:
    headers = await signed_in_page(app_client, admin_headers)
    for bad in ("../pyproject", "nope", "order.json"):
        refused = await app_client.post("/flows", data={"id": "x", "example": bad}, headers=headers)
        assert refused.status_code == 422 and "Choose an example from the list." in refused.text
    assert (await app_client.get("/api/flows/x", headers=admin_headers)).status_code == 404
    empty = await app_client.post("/flows", data={"id": "blank", "example": ""}, headers=headers)
    assert empty.headers.get("hx-redirect") == "/flows/blank/edit", empty.text
    assert (await app_client.get("/api/flows/blank", headers=admin_headers)).json()["states"] == []


async def test_publishing_waits_for_a_bot_to_exist(app_client, admin_headers) -> None:
    from tests.integration.api_helpers import create_flow, flow_doc, freeze

    await create_flow(app_client, admin_headers, flow_doc("lonely"))
    await freeze(app_client, admin_headers, "lonely")
    publish = '<button type="submit" class="primary"'
    alone = await app_client.get("/flows/lonely/versions", headers=admin_headers)
    assert f"{publish} disabled>" in alone.text and 'href="/bots"' in alone.text
    assert (await app_client.post("/api/bots", json={"id": "first_bot"}, headers=admin_headers)).status_code == 201
    served = await app_client.get("/flows/lonely/versions", headers=admin_headers)
    assert f"{publish}>" in served.text and f"{publish} disabled>" not in served.text
