"""Answers that were 500s: huge numbers in documents and forms, odd row numbers, over-long static names."""
from __future__ import annotations

import json
import re

import pytest

from tests.integration.api_helpers import create_flow, create_user, flow_doc

PASSWORD = "correct horse battery"
HUGE = "9" * 5000


@pytest.mark.parametrize("kind, body", [("application/json", '{"x": %s}' % HUGE), ("application/yaml", "x: %s\n" % HUGE)])
async def test_a_5000_digit_number_in_a_document_is_a_422(app_client, admin_headers, kind, body):
    headers = {**admin_headers, "Content-Type": kind}
    created = await app_client.post("/api/flows", content=body, headers=headers)
    assert created.status_code == 422 and "2^53" in created.json()["message"]
    assert created.json()["details"][0]["path"] == ""
    await create_flow(app_client, admin_headers, flow_doc("target"))
    replaced = await app_client.put("/api/flows/target", content=body, headers={**headers, "If-Match": "*"})
    assert replaced.status_code == 422 and replaced.json()["details"]


async def signed_in(client, admin_headers) -> dict[str, str]:
    await create_user(client, admin_headers, "editor", "eddie", password=PASSWORD)
    await client.get("/login")
    token = client.cookies.get("csrftoken")
    done = await client.post("/login", data={"username": "eddie", "password": PASSWORD, "_csrf_token": token},
                             follow_redirects=False)
    assert done.status_code == 303
    return {"X-CSRFToken": token, "HX-Request": "true"}


async def test_the_import_of_a_5000_digit_number_shows_a_problem(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    answer = await app_client.post("/flows/import", headers=headers,
                                   files={"document": ("huge.json", '{"x": %s}' % HUGE, "application/json")})
    assert answer.status_code == 422 and "2^53" in answer.text


@pytest.mark.parametrize("content", ["", "  \n\n"])
async def test_the_import_of_an_empty_file_says_it_is_empty(app_client, admin_headers, content):
    headers = await signed_in(app_client, admin_headers)
    answer = await app_client.post("/flows/import", headers=headers,
                                   files={"document": ("flow.yaml", content, "application/yaml")})
    assert answer.status_code == 422 and "flow.yaml is empty: choose the file that holds the flow." in answer.text


async def post_transition(client, headers, admin_headers, **fields: str):
    await create_flow(client, admin_headers, flow_doc("forms"))
    revision = (await client.get("/api/flows/forms", headers=admin_headers)).headers["etag"].strip('"')
    form = {"id": "name_ok", "from": "ask_name", "to": "ask_phone", "on": "input", **fields}
    return await client.post("/flows/forms/edit/transition/name_ok", data=form,
                             headers={**headers, "If-Match": f'"{revision}"'})


def error_for(html: str, name: str) -> str:
    found = re.search(r'data-error-for="%s"[^>]*>([^<]+)<' % re.escape(name), html)
    return found.group(1) if found else ""


@pytest.mark.parametrize("action, field", [("remove_condition:-5", "if"), ("remove_set:-5", "set"),
                                           ("remove_action:-5", "actions"),
                                           pytest.param("remove_condition:" + HUGE, "if", id="huge")])
async def test_removing_a_row_that_is_not_there_says_so_next_to_the_list(app_client, admin_headers, action, field):
    headers = await signed_in(app_client, admin_headers)
    answer = await post_transition(app_client, headers, admin_headers, _action=action)
    assert answer.status_code in (200, 422), answer.text[:300]
    assert "not in the form any more" in error_for(answer.text, field)
    document = (await app_client.get("/api/flows/forms", headers=admin_headers)).json()
    assert document["transitions"][0] == flow_doc("forms")["transitions"][0]


async def test_a_5000_digit_condition_value_is_an_error_next_to_the_field(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    answer = await post_transition(app_client, headers, admin_headers, **{
        "if[0].var": "age", "if[0].op": "gt", "if[0].value": HUGE, f"if[{HUGE}].var": "x"})
    assert answer.status_code in (200, 422), answer.text[:300]
    assert "at most 40 characters" in error_for(answer.text, "if[0].value")


async def test_a_negative_row_number_never_removes_another_message(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, flow_doc("states"))
    draft = await app_client.get("/api/flows/states", headers=admin_headers)
    state = draft.json()["states"][0]
    form = {"id": state["id"], "_action": "remove_message:-1"}
    for i, message in enumerate(state.get("say") or []):
        form[f"say[{i}].text"] = message.get("text", "")
    answer = await app_client.post(f"/flows/states/edit/state/{state['id']}", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
    assert answer.status_code in (200, 422)
    after = (await app_client.get("/api/flows/states", headers=admin_headers)).json()["states"][0]
    assert len(after.get("say") or []) == len(state.get("say") or [])


async def test_an_over_long_static_name_is_a_404(app_client):
    for path in ("/static/" + "x" * 300, "/static/css/" + "y" * 5000 + ".css"):
        answer = await app_client.get(path)
        assert answer.status_code == 404 and answer.json()["error"] == "not_found"
    assert json.loads((await app_client.get("/static/" + "x" * 300)).text)["message"]


async def test_a_body_nested_ten_thousand_deep_is_a_400_everywhere(app_client, admin_headers):
    deep = "[" * 10000 + "]" * 10000
    headers = {**admin_headers, "Content-Type": "application/json"}
    for path in ("/api/users", "/api/users/admin/tokens", "/api/flows/x/simulate", "/api/bots/x/users/1/events"):
        answer = await app_client.post(path, content=deep, headers=headers)
        assert answer.status_code == 400 and "nested too deeply" in answer.json()["message"], path
    document = await app_client.post("/api/flows", content=deep, headers=headers)
    assert document.status_code == 422 and "nested too deeply" in document.json()["message"]


async def test_length_bounds_the_wrong_way_round_are_refused_next_to_the_field(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, flow_doc("bounds"))
    draft = await app_client.get("/api/flows/bounds", headers=admin_headers)
    state = next(s for s in draft.json()["states"] if (s.get("input") or {}).get("type") == "text")
    form = {"id": state["id"], "title": state.get("title", ""),
            "input.type": "text", "input.save_as": state["input"]["save_as"],
            "input.min_length": "5", "input.max_length": "2"}
    for i, message in enumerate(state.get("say") or []):
        form[f"say[{i}].text"] = message.get("text", "")
    answer = await app_client.post(f"/flows/bounds/edit/state/{state['id']}", data=form,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
    assert answer.status_code in (200, 422)
    assert "no answer is accepted" in error_for(answer.text, "input.max_length")
    after = (await app_client.get("/api/flows/bounds", headers=admin_headers)).json()
    assert next(s for s in after["states"] if s["id"] == state["id"])["input"] == state["input"]
