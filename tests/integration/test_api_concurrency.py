"""Concurrent writers: one save per revision wins, the others get 412 and lose nothing by retrying."""
from __future__ import annotations

import asyncio

from tests.integration.api_helpers import create_flow, flow_doc

WRITERS = 6


async def test_simultaneous_saves_from_one_revision(app_client, admin_headers):
    revision = await create_flow(app_client, admin_headers, flow_doc("race"))
    headers = {**admin_headers, "If-Match": f'"{revision}"'}
    responses = await asyncio.gather(*[
        app_client.put("/api/flows/race", json=flow_doc("race", title=f"writer {i}"), headers=headers)
        for i in range(WRITERS)
    ])
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [412] * (WRITERS - 1), [r.text for r in responses]
    winner = next(r for r in responses if r.status_code == 200)
    title = next(f"writer {i}" for i, r in enumerate(responses) if r is winner)
    current = await app_client.get("/api/flows/race", headers=admin_headers)
    assert current.json()["title"] == title
    assert current.headers["etag"] == f'"{winner.json()["revision"]}"'


async def test_retrying_writers_lose_nothing(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("merge"))

    async def add_state(index: int) -> int:
        conflicts = 0
        while True:
            draft = await app_client.get("/api/flows/merge", headers=admin_headers)
            document = draft.json()
            document["states"].append({"id": f"extra_{index}", "final": True, "say": [{"text": str(index)}]})
            response = await app_client.put("/api/flows/merge", json=document,
                                            headers={**admin_headers, "If-Match": draft.headers["etag"]})
            if response.status_code == 200:
                return conflicts
            assert response.status_code == 412, response.text
            conflicts += 1

    await asyncio.gather(*[add_state(i) for i in range(WRITERS)])
    states = {s["id"] for s in (await app_client.get("/api/flows/merge", headers=admin_headers)).json()["states"]}
    assert {f"extra_{i}" for i in range(WRITERS)} <= states


async def test_simultaneous_freezes_make_one_version(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("twice"))
    responses = await asyncio.gather(*[
        app_client.post("/api/flows/twice/versions", json={"note": str(i)}, headers=admin_headers) for i in range(4)
    ])
    assert sorted(r.status_code for r in responses) == [200, 200, 200, 201], [r.text for r in responses]
    assert {r.json()["version"] for r in responses} == {1}
    assert len((await app_client.get("/api/flows/twice/versions", headers=admin_headers)).json()) == 1
