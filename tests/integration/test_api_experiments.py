"""The experiment routes: bad requests get sentences, one experiment at a time, roles, endings by publish or deletion."""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.api_helpers import create_flow, create_user, flow_doc, freeze

BOT = {"id": "shop", "title": "Shop", "token": "tok-shop", "webhook_secret": "secret_shop"}
GOOD = {"flow": "reg", "arms": [{"version": 1, "weight": 1}, {"version": 2, "weight": 1}],
        "goal": {"state": "confirmed"}, "auto_promote": {"confidence": 0.95, "min_dialogs": 200}}


async def setup(client: Any, admin: dict[str, str]) -> None:
    """Flow `reg` with versions 1 and 2, and 3 where the goal state is called differently; bot `shop`."""
    await create_flow(client, admin, flow_doc("reg"))
    await freeze(client, admin, "reg")
    for title, document in (("second", flow_doc("reg", title="second")),
                            ("third", json.loads(json.dumps(flow_doc("reg", title="third")).replace(
                                '"confirmed"', '"done"')))):
        revision = (await client.get("/api/flows/reg", headers=admin)).headers["etag"]
        answer = await client.put("/api/flows/reg", json=document, headers={**admin, "If-Match": revision})
        assert answer.status_code == 200, answer.text
        await freeze(client, admin, "reg", title)
    assert (await client.post("/api/bots", json=BOT, headers=admin)).status_code == 201
    answer = await client.post("/api/bots/shop/publish", json={"flow": "reg", "version": 1}, headers=admin)
    assert answer.status_code == 200


def changed(**fields: Any) -> dict[str, Any]:
    return {**GOOD, **fields}


BAD = [
    (changed(arms=[{"version": 1, "weight": 1}]), "arms", "2 to 4 arms"),
    (changed(arms=[{"version": v, "weight": 1} for v in (1, 2, 3, 1, 2)]), "arms", "2 to 4 arms"),
    (changed(arms=[{"version": 1, "weight": 0}, {"version": 2, "weight": 1}]), "arms[0].weight", "from 1"),
    (changed(arms=[{"version": 1, "weight": -3}, {"version": 2, "weight": 1.5}]), "arms[1].weight", "whole number"),
    (changed(arms=[{"version": 1, "weight": 1}, {"version": 1, "weight": 1}]), "arms[1].version", "already"),
    (changed(arms=[{"version": 1, "weight": 1}, {"version": 9, "weight": 1}]), "arms[1].version", "no version 9"),
    (changed(arms=[{"version": 1, "weight": 1}, {"version": 3, "weight": 1}]), "goal.state",
     "version 3 has no state 'confirmed'"),
    (changed(goal={"state": "nowhere"}), "goal.state", "no state 'nowhere'"),
    (changed(goal="confirmed"), "goal", "{\"state\""),
    (changed(auto_promote={"confidence": 1.5, "min_dialogs": 10}), "auto_promote.confidence", "0.5"),
    (changed(auto_promote={"confidence": 0.9, "min_dialogs": 0}), "auto_promote.min_dialogs", "from 1"),
    (changed(auto_promote={"confidence": 0.9}), "auto_promote", "null"),
    (changed(colour="red"), "colour", "unknown field"),
    (changed(flow=7), "flow", "as a string"),
]


@pytest.mark.parametrize("body, path, words", BAD)
async def test_bad_requests_name_the_field_and_what_to_do(body: dict[str, Any], path: str, words: str,
                                                          app_client: Any, admin_headers: dict[str, str]) -> None:
    await setup(app_client, admin_headers)
    answer = await app_client.post("/api/bots/shop/experiment", json=body, headers=admin_headers)
    assert answer.status_code == 422, answer.text
    error = answer.json()
    assert any(d["path"] == path and words in d["message"] for d in error["details"]), error
    assert words in error["message"]


async def test_every_problem_of_one_request_is_a_detail_of_its_own(app_client: Any,
                                                                  admin_headers: dict[str, str]) -> None:
    await setup(app_client, admin_headers)
    body = changed(arms=[{"version": 1, "weight": 0}, {"version": 1, "weight": 1}], goal="confirmed",
                   auto_promote={"confidence": 2, "min_dialogs": 0})
    answer = await app_client.post("/api/bots/shop/experiment", json=body, headers=admin_headers)
    assert answer.status_code == 422, answer.text
    paths = [d["path"] for d in answer.json()["details"]]
    assert paths == ["arms[0].weight", "arms[1].version", "goal", "auto_promote.confidence",
                     "auto_promote.min_dialogs"], paths


async def test_one_at_a_time_roles_stop_and_the_publication_it_makes(app_client: Any,
                                                                     admin_headers: dict[str, str]) -> None:
    await setup(app_client, admin_headers)
    viewer = (await create_user(app_client, admin_headers, "viewer"))["headers"]
    editor = (await create_user(app_client, admin_headers, "editor"))["headers"]
    publisher = (await create_user(app_client, admin_headers, "publisher"))["headers"]
    assert (await app_client.get("/api/bots/shop/experiment", headers=viewer)).status_code == 404
    assert (await app_client.post("/api/bots/shop/experiment", json=GOOD, headers=editor)).status_code == 403
    assert (await app_client.post("/api/bots/nobody/experiment", json=GOOD, headers=publisher)).status_code == 404
    unknown = await app_client.post("/api/bots/shop/experiment", json=changed(flow="nope"), headers=publisher)
    assert unknown.status_code == 404 and "nope" in unknown.json()["message"]
    started = await app_client.post("/api/bots/shop/experiment", json=GOOD, headers=publisher)
    assert started.status_code == 201, started.text
    record = started.json()
    assert record["status"] == "running" and record["goal"] == {"state": "confirmed"}
    assert record["auto_promote"] == {"confidence": 0.95, "min_dialogs": 200} and record["promoted"] is None
    again = await app_client.post("/api/bots/shop/experiment", json=GOOD, headers=publisher)
    assert again.status_code == 409 and "stop it" in again.json()["message"]
    read = await app_client.get("/api/bots/shop/experiment", headers=viewer)
    assert read.status_code == 200
    assert [(a["version"], a["dialogs"], a["goal_reached"]) for a in read.json()["arms"]] == [(1, 0, 0), (2, 0, 0)]
    assert read.json()["method"] == "probability to be best, Beta-Binomial, uniform prior"
    assert (await app_client.post("/api/bots/shop/experiment/stop", json={"promote": 2},
                                  headers=editor)).status_code == 403
    wrong = await app_client.post("/api/bots/shop/experiment/stop", json={"promote": 3}, headers=publisher)
    assert wrong.status_code == 422 and "1, 2" in wrong.json()["message"]
    stopped = await app_client.post("/api/bots/shop/experiment/stop", json={"promote": 2}, headers=publisher)
    assert stopped.status_code == 200, stopped.text
    assert stopped.json()["promoted"]["version"] == 2 and stopped.json()["promoted"]["automatic"] is False
    assert stopped.json()["publication"]["sessions"] == "keep"
    history = (await app_client.get("/api/bots/shop/publications", headers=viewer)).json()
    assert [(p["version"], p["sessions"]) for p in history[:2]] == [(2, "keep"), (1, "keep")]
    twice = await app_client.post("/api/bots/shop/experiment/stop", json={"promote": None}, headers=publisher)
    assert twice.status_code == 409 and "nothing to stop" in twice.json()["message"]
    audit = (await app_client.get("/api/audit", headers=admin_headers)).json()
    actions = [e["action"] for e in (audit if isinstance(audit, list) else audit["entries"])]
    assert "experiment.start" in actions and "experiment.promote" in actions


async def test_a_publish_or_deleting_the_flow_ends_it_with_a_sentence(app_client: Any,
                                                                     admin_headers: dict[str, str]) -> None:
    await setup(app_client, admin_headers)
    assert (await app_client.post("/api/bots/shop/experiment", json=GOOD, headers=admin_headers)).status_code == 201
    published = await app_client.post("/api/bots/shop/publish", json={"flow": "reg", "version": 2},
                                      headers=admin_headers)
    assert published.status_code == 200 and published.json()["experiment_ended"] is True
    ended = (await app_client.get("/api/bots/shop/experiment", headers=admin_headers)).json()
    assert ended["status"] == "ended" and ended["promoted"] is None and ended["ended_because"] == "published"
    assert ended["end_reason"] == "Ended because version 2 of flow 'reg' was published to the bot."
    # an experiment on a flow the bot does not serve ends when that flow (and its versions) is deleted
    await create_flow(app_client, admin_headers, flow_doc("other"))
    await freeze(app_client, admin_headers, "other")
    revision = (await app_client.get("/api/flows/other", headers=admin_headers)).headers["etag"]
    await app_client.put("/api/flows/other", json=flow_doc("other", title="2"),
                         headers={**admin_headers, "If-Match": revision})
    await freeze(app_client, admin_headers, "other")
    assert (await app_client.post("/api/bots/shop/experiment", json=changed(flow="other"),
                                  headers=admin_headers)).status_code == 201
    assert (await app_client.delete("/api/flows/other", headers=admin_headers)).status_code == 204
    gone = (await app_client.get("/api/bots/shop/experiment", headers=admin_headers)).json()
    assert gone["status"] == "ended" and "'other' and its versions were deleted" in gone["end_reason"]
    assert gone["ended_because"] == "deleted"


@pytest.mark.parametrize("body", ["not json", "[1, 2]", '{"promote": "2"}', '{"promote": true, "x": 1}'])
async def test_stop_with_a_malformed_body_is_refused_with_a_sentence(body: str, app_client: Any,
                                                                    admin_headers: dict[str, str]) -> None:
    await setup(app_client, admin_headers)
    assert (await app_client.post("/api/bots/shop/experiment", json=GOOD, headers=admin_headers)).status_code == 201
    answer = await app_client.post("/api/bots/shop/experiment/stop", content=body,
                                   headers={**admin_headers, "Content-Type": "application/json"})
    assert 400 <= answer.status_code < 500 and answer.json()["message"], answer.text
    still = (await app_client.get("/api/bots/shop/experiment", headers=admin_headers)).json()
    assert still["status"] == "running"
