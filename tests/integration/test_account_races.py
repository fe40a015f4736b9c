"""Two admins acting on each other at the same moment, through two replicas: the last-admin rule holds."""
from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.api_helpers import bearer
from tests.integration.replicas import replicas

ROUNDS = 6
TOKEN = "race-bootstrap-token"


@pytest.fixture
def two(database_url: str, tmp_path: Path) -> Iterator[list[str]]:
    with replicas(database_url, tmp_path, TOKEN) as urls:
        yield urls


async def make_admin(client: httpx.AsyncClient, name: str) -> dict[str, str]:
    made = await client.post("/api/users", json={"username": name, "role": "admin"}, headers=bearer(TOKEN))
    assert made.status_code == 201, made.text
    return bearer(made.json()["token"])


async def admins(client: httpx.AsyncClient, headers: dict[str, str]) -> list[str]:
    listed = await client.get("/api/users", headers=headers)
    assert listed.status_code == 200, listed.text
    return sorted(u["username"] for u in listed.json() if u["role"] == "admin")


@pytest.mark.parametrize("doing", ["demote", "remove"])
async def test_two_admins_acting_on_each_other_at_once_leave_one(two, doing):
    async with httpx.AsyncClient(base_url=two[0], timeout=30) as one, \
            httpx.AsyncClient(base_url=two[1], timeout=30) as two:
        for round_ in range(ROUNDS):
            alice, bob = f"alice{round_}", f"bob{round_}"
            alice_h, bob_h = await make_admin(one, alice), await make_admin(one, bob)
            # The bootstrap admin steps aside, so Alice and Bob are the only admins.
            assert (await one.patch("/api/users/admin", json={"role": "viewer"}, headers=alice_h)).status_code == 200

            def act(client: httpx.AsyncClient, headers: dict[str, str], target: str):
                if doing == "demote":
                    return client.patch(f"/api/users/{target}", json={"role": "editor"}, headers=headers)
                return client.delete(f"/api/users/{target}", headers=headers)

            answers = await asyncio.gather(act(one, alice_h, bob), act(two, bob_h, alice))
            done = [a for a in answers if a.status_code in (200, 204)]
            refused = [a for a in answers if a.status_code not in (200, 204)]
            assert len(done) == 1, [(a.status_code, a.text) for a in answers]
            # The loser is refused: 409 last_admin when both passed the role check, else 401/403 (already demoted).
            assert refused[0].status_code in (401, 403, 409), refused[0].text
            if refused[0].status_code == 409:
                assert refused[0].json()["error"] == "last_admin"
            winner, winner_h = (alice, alice_h) if answers[0] in done else (bob, bob_h)
            assert await admins(one, winner_h) == [winner], round_
            assert (await one.patch("/api/users/admin", json={"role": "admin"}, headers=winner_h)).status_code == 200
            # The next round starts again from the bootstrap admin alone.
            assert (await one.patch(f"/api/users/{winner}", json={"role": "viewer"}, headers=bearer(TOKEN))).status_code == 200
