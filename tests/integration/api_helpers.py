"""Helpers for integration tests that drive the JSON API: users per role, sample documents."""
from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ROLES = ("viewer", "editor", "publisher", "admin")
_names = itertools.count(1)
PASSWORD = "correct horse battery"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def log_in(client: Any, username: str, password: str = PASSWORD) -> int:
    """Log the client's cookie session in through the login form; the answer's status (303: logged in)."""
    await client.get("/login")
    response = await client.post("/login", data={"username": username, "password": password,
                                                 "_csrf_token": client.cookies.get("csrftoken")},
                                 follow_redirects=False)
    return response.status_code


def session_cookie(client: Any) -> dict[str, str]:
    """A copy of the client's session cookie as a header, as someone who stole it would send it."""
    pairs = [f"{c.name}={c.value}" for c in client.cookies.jar if c.name.startswith("botflow_session")]
    assert pairs
    return {"Cookie": "; ".join(pairs)}


async def create_user(client: Any, admin_headers: dict[str, str], role: str, username: str | None = None,
                      password: str | None = PASSWORD) -> dict[str, Any]:
    """A new user through POST /api/users; returns the answer plus ready-made `headers`."""
    username = username or f"{role}{next(_names)}"
    body: dict[str, Any] = {"username": username, "role": role}
    if password is not None:
        body["password"] = password
    response = await client.post("/api/users", json=body, headers=admin_headers)
    assert response.status_code == 201, response.text
    answer = response.json()
    return {**answer, "headers": bearer(answer["token"])}


def registration() -> dict[str, Any]:
    """The spec's example flow: valid, frozen without errors."""
    return json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))


def flow_doc(flow_id: str = "registration", **changes: Any) -> dict[str, Any]:
    """The example flow under another id, with top-level fields replaced."""
    document = copy.deepcopy(registration())
    document["id"] = flow_id
    document.update(changes)
    return document


def broken_doc(flow_id: str = "broken") -> dict[str, Any]:
    """Loads fine but has validation errors (an unknown start state, a dead end)."""
    return {"format": "botflow/v1", "id": flow_id, "title": "Broken", "start": "nowhere",
            "states": [{"id": "ask", "say": [{"text": "Hi"}], "input": {"type": "text", "save_as": "x"}}],
            "transitions": []}


async def create_flow(client: Any, headers: dict[str, str], document: dict[str, Any]) -> str:
    """POST a flow; returns its revision."""
    response = await client.post("/api/flows", json=document, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["revision"]


async def freeze(client: Any, headers: dict[str, str], flow_id: str, note: str = "") -> dict[str, Any]:
    response = await client.post(f"/api/flows/{flow_id}/versions", json={"note": note}, headers=headers)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def two_versions(client: Any, headers: dict[str, str], flow_id: str) -> None:
    """The example flow with versions 1 and 2 (the second with the title "Second")."""
    await create_flow(client, headers, flow_doc(flow_id))
    await freeze(client, headers, flow_id, "v1")
    draft = await client.get(f"/api/flows/{flow_id}", headers=headers)
    await client.put(f"/api/flows/{flow_id}", json=flow_doc(flow_id, title="Second"),
                     headers={**headers, "If-Match": draft.headers["etag"]})
    await freeze(client, headers, flow_id, "v2")
