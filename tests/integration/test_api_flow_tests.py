"""Saved dialog tests over HTTP: read and replace with a revision, run on the draft and a version,
generate, and a publish refused while the version fails them."""
from __future__ import annotations

import copy

from tests.integration.api_helpers import create_flow, flow_doc, freeze

HAPPY = {
    "name": "happy path",
    "steps": [
        {"update": {"text": "/start"}, "expect": {"state": "ask_name", "replies": ["Привет! Как вас зовут?"]}},
        {"update": {"text": "Иван"}, "expect": {"state": "ask_phone", "data": {"name": "Иван"}}},
        {"update": {"text": "8 912 345 67 89"}, "expect": {"data": {"phone": "+79123456789"}}},
    ],
}


async def put_tests(client, headers, flow_id, tests, revision):
    return await client.put(f"/api/flows/{flow_id}/tests", json={"tests": tests},
                            headers={**headers, "If-Match": f'"{revision}"'})


async def test_saved_tests_round_trip_with_revisions_and_roles(app_client, admin_headers, role_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    viewer, editor = await role_headers("viewer"), await role_headers("editor")
    empty = await app_client.get("/api/flows/reg/tests", headers=viewer)
    assert empty.status_code == 200 and empty.json()["tests"] == []
    first = empty.headers["etag"].strip('"')
    assert (await app_client.put("/api/flows/reg/tests", json={"tests": [HAPPY]}, headers=editor)).status_code == 428
    assert (await put_tests(app_client, viewer, "reg", [HAPPY], first)).status_code == 403
    saved = await put_tests(app_client, editor, "reg", [HAPPY], first)
    assert saved.status_code == 200, saved.text
    revision = saved.json()["revision"]
    assert saved.headers["etag"] == f'"{revision}"' and revision != first
    stale = await put_tests(app_client, editor, "reg", [], first)
    assert stale.status_code == 412 and "revision" in stale.json()["message"]
    read = await app_client.get("/api/flows/reg/tests", headers=viewer)
    assert read.json()["tests"] == [HAPPY] and read.json()["revision"] == revision
    # Tests are not part of the document: the draft's revision and the version hash do not move.
    draft = await app_client.get("/api/flows/reg", headers=viewer)
    assert "tests" not in draft.json()


async def test_malformed_tests_are_refused_with_a_detail_per_problem(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    bad = [{"name": "a", "steps": [{"update": {"text": 5}}]},
           {"name": "a", "steps": [{"update": {"idle": -1}, "expect": {"colour": "red"}}]},
           {"steps": []}]
    answer = await put_tests(app_client, admin_headers, "reg", bad, "t0")
    assert answer.status_code == 422
    paths = {d["path"] for d in answer.json()["details"]}
    assert {"tests[0].steps[0].update.text", "tests[1].name", "tests[1].steps[0].update.idle",
            "tests[2].name", "tests[2].steps"} <= paths
    assert (await app_client.get("/api/flows/reg/tests", headers=admin_headers)).json()["tests"] == []


async def test_run_on_draft_and_version_shows_the_first_difference(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    await freeze(app_client, admin_headers, "reg", "v1")
    assert (await put_tests(app_client, admin_headers, "reg", [HAPPY], "t0")).status_code == 200
    draft = (await app_client.get("/api/flows/reg", headers=admin_headers))
    changed = copy.deepcopy(draft.json())
    changed["states"][0]["say"][0]["text"] = "Здравствуйте! Ваше имя?"
    saved = await app_client.put("/api/flows/reg", json=changed,
                                 headers={**admin_headers, "If-Match": draft.headers["etag"]})
    assert saved.status_code == 200
    on_draft = (await app_client.post("/api/flows/reg/tests/run", json={"source": "draft"},
                                      headers=admin_headers)).json()
    assert on_draft["failed"] == 1 and on_draft["passed"] == 0
    failure = on_draft["results"][0]["failure"]
    assert failure["step"] == 0 and failure["differs"] == ["replies"]
    assert failure["expected"]["replies"] == ["Привет! Как вас зовут?"]
    assert failure["actual"]["replies"] == ["Здравствуйте! Ваше имя?"]
    on_version = (await app_client.post("/api/flows/reg/tests/run", json={"source": 1},
                                        headers=admin_headers)).json()
    assert on_version["passed"] == 1 and on_version["failed"] == 0 and on_version["source"] == 1
    assert on_version["coverage"]["covered"] == ["name_ok", "phone_ok"]
    missing = await app_client.post("/api/flows/reg/tests/run", json={"source": 9}, headers=admin_headers)
    assert missing.status_code == 404


async def test_publish_is_refused_while_the_version_fails_its_tests(app_client, admin_headers):
    document = flow_doc("reg")
    await create_flow(app_client, admin_headers, document)
    await freeze(app_client, admin_headers, "reg", "v1")
    bot = await app_client.post("/api/bots", json={"id": "gate", "title": "Gate", "require_tests": True},
                                headers=admin_headers)
    assert bot.status_code == 201 and bot.json()["require_tests"] is True
    publish = {"flow": "reg", "version": 1}
    none_saved = await app_client.post("/api/bots/gate/publish", json=publish, headers=admin_headers)
    assert none_saved.status_code == 409 and none_saved.json()["error"] == "no_tests"
    assert "flow 'Регистрация' has no saved tests" in none_saved.json()["message"]  # its title, not its id
    wrong = copy.deepcopy(HAPPY)
    wrong["name"] = "expects another greeting"
    wrong["steps"][0]["expect"]["replies"] = ["Добрый день!"]
    assert (await put_tests(app_client, admin_headers, "reg", [HAPPY, wrong], "t0")).status_code == 200
    blocked = await app_client.post("/api/bots/gate/publish", json=publish, headers=admin_headers)
    assert blocked.status_code == 409, blocked.text
    body = blocked.json()
    assert body["error"] == "tests_failed" and "expects another greeting" in body["message"]
    assert body["message"].startswith("Version 1 of 'Регистрация' fails 1 of 2 saved tests")
    assert body["details"] == [{"path": "expects another greeting",
                                "message": 'step 1 (/start): replies expected ["Добрый день!"], got '
                                           '["Привет! Как вас зовут?"]',
                                "test": "expects another greeting", "step": 0, "shown": "/start",
                                "differs": ["replies"],
                                "expected": {"state": "ask_name", "replies": ["Добрый день!"]},
                                "actual": {"state": "ask_name", "replies": ["Привет! Как вас зовут?"]},
                                "error": None}]
    assert (await app_client.get("/api/bots/gate", headers=admin_headers)).json()["flow"] is None
    tests, revision = [HAPPY], (await app_client.get("/api/flows/reg/tests", headers=admin_headers)).json()["revision"]
    assert (await put_tests(app_client, admin_headers, "reg", tests, revision)).status_code == 200
    allowed = await app_client.post("/api/bots/gate/publish", json=publish, headers=admin_headers)
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["tests_passed"] == 1
    # Turning the rule off lets any version through again.
    off = await app_client.patch("/api/bots/gate", json={"require_tests": False}, headers=admin_headers)
    assert off.status_code == 200 and off.json()["require_tests"] is False


async def test_generate_covers_every_transition_of_the_example(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    generated = await app_client.post("/api/flows/reg/tests/generate", json={}, headers=admin_headers)
    assert generated.status_code == 200, generated.text
    body = generated.json()
    assert body["uncovered"] == [] and body["coverage"]["percent"] == 100.0
    saved = await put_tests(app_client, admin_headers, "reg", body["tests"], "t0")
    assert saved.status_code == 200, saved.text
    run = (await app_client.post("/api/flows/reg/tests/run", json={}, headers=admin_headers)).json()
    assert run["failed"] == 0 and run["coverage"]["percent"] == 100.0


async def test_hostile_input_gets_a_sentence_and_a_4xx(app_client, admin_headers, role_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    viewer = await role_headers("viewer")
    assert (await app_client.post("/api/flows/reg/tests/run", json={}, headers=viewer)).status_code == 200
    assert (await app_client.get("/api/flows/reg/tests")).status_code == 401
    cases = [
        ("POST", "/api/flows/reg/tests/run", {"source": "yesterday"}, 422),
        ("POST", "/api/flows/reg/tests/run", {"tests": "all"}, 422),
        ("POST", "/api/flows/reg/tests/run", {"tests": ["no such test"]}, 422),
        ("POST", "/api/flows/reg/tests/run", {"source": 0}, 422),
        ("POST", "/api/flows/nope/tests/run", {}, 404),
        ("POST", "/api/flows/reg/tests/generate", {"source": 7}, 404),
        ("PUT", "/api/flows/reg/tests", {"tests": "many"}, 422),
        ("PUT", "/api/flows/reg/tests", {"tests": [{"name": "x", "steps": [{"update": {"idle": 1e308}}]}]}, 422),
        ("PUT", "/api/flows/reg/simulate/s1", {"dialog": {"state": "ask_name", "history": "x", "updated_at": 1}}, 422),
        ("PUT", "/api/flows/reg/simulate/s1", {"dialog": {"state": "ask_name"}, "now": "soon"}, 422),
        ("PUT", "/api/flows/reg/simulate/s1", {"dialog": {"state": "ask_name"}, "now": 1e300}, 422),
        ("POST", "/api/bots/nobot/replay", {}, 404),
        ("POST", "/api/bots/nobot/replay", {"last": 0}, 422),
        ("POST", "/api/bots/nobot/replay", {"users": [1, 2]}, 422),
    ]
    for method, path, body, status in cases:
        answer = await app_client.request(method, path, json=body, headers={**admin_headers, "If-Match": '"t0"'})
        assert answer.status_code == status, (path, body, answer.text)
        assert answer.json()["message"].endswith("."), answer.text
    many = {"tests": [{"name": f"t{i}", "steps": [{"update": {"text": "hi"}}]} for i in range(2001)]}
    too_many = await app_client.put("/api/flows/reg/tests", json=many, headers={**admin_headers, "If-Match": '"t0"'})
    assert too_many.status_code == 422 and "2000" in too_many.json()["message"]


async def test_one_test_added_or_removed_and_generated_tests_added_on_the_server(app_client, admin_headers,
                                                                                 role_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    editor, viewer = await role_headers("editor"), await role_headers("viewer")
    added = await app_client.post("/api/flows/reg/tests", json={"test": HAPPY}, headers={**editor, "If-Match": '"t0"'})
    assert added.status_code == 201, added.text
    revision = added.json()["revision"]
    twice = await app_client.post("/api/flows/reg/tests", json={"test": HAPPY},
                                  headers={**editor, "If-Match": f'"{revision}"'})
    assert twice.status_code == 422 and "already named" in twice.json()["details"][0]["message"]
    assert (await app_client.post("/api/flows/reg/tests/generated", json={},
                                  headers={**viewer, "If-Match": f'"{revision}"'})).status_code == 403
    assert (await app_client.post("/api/flows/reg/tests/generated", json={}, headers=editor)).status_code == 428
    generated = await app_client.post("/api/flows/reg/tests/generated", json={},
                                      headers={**editor, "If-Match": f'"{revision}"'})
    assert generated.status_code == 200, generated.text
    # Transitions, each invalid input, the reminder, each command and button: nine dialogs on registration.
    assert generated.json()["added"] == 9 and generated.json()["tests"] == 10
    revision = generated.json()["revision"]
    again = await app_client.post("/api/flows/reg/tests/generated", json={},
                                  headers={**editor, "If-Match": f'"{revision}"'})
    assert again.json()["added"] == 0  # the same names are not added twice
    revision = again.json()["revision"]
    stale = await app_client.delete("/api/flows/reg/tests/happy path", headers={**editor, "If-Match": '"t0"'})
    assert stale.status_code == 412
    removed = await app_client.delete("/api/flows/reg/tests/happy path", headers={**editor, "If-Match": f'"{revision}"'})
    assert removed.status_code == 200, removed.text
    names = [t["name"] for t in (await app_client.get("/api/flows/reg/tests", headers=viewer)).json()["tests"]]
    assert len(names) == 9 and "happy path" not in names
    gone = await app_client.delete("/api/flows/reg/tests/happy path",
                                   headers={**editor, "If-Match": f'"{removed.json()["revision"]}"'})
    assert gone.status_code == 404
