"""A publish racing the deletion of its flow, through two replicas: 409 with a sentence, never a 500."""
from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.api_helpers import bearer, flow_doc
from tests.integration.replicas import replicas

ROUNDS = 10
TOKEN = "publish-race-token"
ADMIN = bearer(TOKEN)


@pytest.fixture
def two(database_url: str, tmp_path: Path) -> Iterator[list[str]]:
    with replicas(database_url, tmp_path, TOKEN) as urls:
        yield urls


async def test_publishing_a_flow_while_it_is_deleted(two):
    async with httpx.AsyncClient(base_url=two[0], timeout=30, headers=ADMIN) as one, \
            httpx.AsyncClient(base_url=two[1], timeout=30, headers=ADMIN) as other:
        assert (await one.post("/api/bots", json={"id": "racer", "title": "Racer", "token": "t"})).status_code == 201
        for round_ in range(ROUNDS):
            flow_id = f"race{round_}"
            assert (await one.post("/api/flows", json=flow_doc(flow_id))).status_code == 201
            assert (await one.post(f"/api/flows/{flow_id}/versions", json={})).status_code == 201
            published, deleted = await asyncio.gather(
                other.post("/api/bots/racer/publish", json={"flow": flow_id, "sessions": "reset"}),
                one.delete(f"/api/flows/{flow_id}"))
            # 422 no_version: the deletion had taken the versions but not yet the flow when the publish looked
            assert published.status_code in (200, 201, 404, 409) or (
                published.status_code == 422 and published.json()["error"] == "no_version"), published.text
            assert deleted.status_code in (204, 409), deleted.text
            # Exactly one of them wins: a bot never serves a deleted flow, and a served flow stays.
            assert (published.status_code in (200, 201)) != (deleted.status_code == 204), (published.text, deleted.text)
            for answer in (published, deleted):
                if answer.status_code == 409:
                    assert answer.json()["message"].endswith("."), answer.text
            bot = (await one.get("/api/bots/racer")).json()
            exists = (await one.get(f"/api/flows/{flow_id}")).status_code == 200
            assert exists == (deleted.status_code != 204)
            if published.status_code in (200, 201):
                assert bot["flow"] == flow_id
