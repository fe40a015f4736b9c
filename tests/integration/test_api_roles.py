"""The role matrix: every API route for every role (and for no token) gets the status the spec implies."""
from __future__ import annotations

from typing import Any, Callable

from tests.integration.api_helpers import ROLES, bearer, create_flow, create_user, flow_doc, freeze

RANK = {role: rank for rank, role in enumerate(ROLES)}
BOT = {"id": "shop", "title": "Shop", "token": "tok-shop", "webhook_secret": "secret_shop"}

# (name, least role, success status, request builder(role, ctx) -> (method, path, kwargs))
Case = tuple[str, str, tuple[int, ...], Callable[[str, dict[str, Any]], tuple[str, str, dict[str, Any]]]]
CASES: list[Case] = [
    ("list flows", "viewer", (200,), lambda r, c: ("GET", "/api/flows", {})),
    ("create flow", "editor", (201,), lambda r, c: ("POST", "/api/flows", {"json": flow_doc(f"new_{r}")})),
    ("read draft", "viewer", (200,), lambda r, c: ("GET", "/api/flows/reg", {})),
    ("replace draft", "editor", (200,), lambda r, c: (
        "PUT", f"/api/flows/p_{r}", {"json": flow_doc(f"p_{r}", title="x"), "headers": {"If-Match": c[f"p_{r}"]}})),
    ("delete draft-only flow", "editor", (204,), lambda r, c: ("DELETE", f"/api/flows/d_{r}", {})),
    ("delete flow with versions", "publisher", (204,), lambda r, c: ("DELETE", f"/api/flows/dv_{r}", {})),
    ("validation", "viewer", (200,), lambda r, c: ("GET", "/api/flows/reg/validation", {})),
    ("freeze version", "publisher", (201,), lambda r, c: ("POST", f"/api/flows/v_{r}/versions", {"json": {}})),
    ("list versions", "viewer", (200,), lambda r, c: ("GET", "/api/flows/reg/versions", {})),
    ("read version", "viewer", (200,), lambda r, c: ("GET", "/api/flows/reg/versions/1", {})),
    ("diff", "viewer", (200,), lambda r, c: ("GET", "/api/flows/reg/diff?from=1&to=draft", {})),
    ("export", "viewer", (200,), lambda r, c: ("GET", "/api/flows/reg/export?format=mermaid", {})),
    ("simulate", "editor", (200,), lambda r, c: (
        "POST", "/api/flows/reg/simulate", {"json": {"session": r, "update": {"text": "hi"}}})),
    ("create bot", "admin", (201,), lambda r, c: ("POST", "/api/bots", {"json": {**BOT, "id": f"bot_{r}"}})),
    ("list bots", "viewer", (200,), lambda r, c: ("GET", "/api/bots", {})),
    ("read bot", "viewer", (200,), lambda r, c: ("GET", "/api/bots/shop", {})),
    ("patch bot", "admin", (200,), lambda r, c: ("PATCH", "/api/bots/shop", {"json": {"title": r}})),
    ("put bot", "admin", (200,), lambda r, c: ("PUT", "/api/bots/shop", {"json": {"title": r}})),
    ("publish", "publisher", (200,), lambda r, c: ("POST", "/api/bots/shop/publish", {"json": {"flow": "reg", "version": 1}})),
    ("publications", "viewer", (200,), lambda r, c: ("GET", "/api/bots/shop/publications", {})),
    ("create user", "admin", (201,), lambda r, c: (
        "POST", "/api/users", {"json": {"username": f"made_by_{r}", "role": "viewer", "password": "long enough pw"}})),
    ("list users", "admin", (200,), lambda r, c: ("GET", "/api/users", {})),
    ("token for someone else", "admin", (201,), lambda r, c: ("POST", "/api/users/bystander/tokens", {})),
    ("token for oneself", "viewer", (201,), lambda r, c: ("POST", f"/api/users/{c['user_' + r]}/tokens", {})),
    ("who am I", "viewer", (200,), lambda r, c: ("GET", "/api/users/me", {})),
    # An API token never changes its own account's password (that takes a browser session and the current one).
    ("change own password", "viewer", (403,), lambda r, c: (
        "PATCH", f"/api/users/{c['user_' + r]}", {"json": {"password": "another one"}})),
    ("change someone's role", "admin", (200,), lambda r, c: ("PATCH", "/api/users/bystander", {"json": {"role": "viewer"}})),
    ("remove user", "admin", (204,), lambda r, c: ("DELETE", f"/api/users/doomed_{r}", {})),
    ("audit log", "admin", (200,), lambda r, c: ("GET", "/api/audit", {})),
    ("send event", "editor", (404,), lambda r, c: (
        "POST", "/api/bots/shop/users/42/events", {"json": {"name": "payment", "payload": {}}})),
    ("read dialog", "viewer", (404,), lambda r, c: ("GET", "/api/bots/shop/users/42/session", {})),
    ("read timeline", "viewer", (200, 404), lambda r, c: ("GET", "/api/bots/shop/users/42/timeline", {})),
    ("erase a user's data", "admin", (204,), lambda r, c: ("DELETE", "/api/bots/shop/users/42", {})),
]


async def prepare(client, admin: dict[str, str]) -> dict[str, Any]:
    """Users of every role and, per role, the objects that role's mutating requests consume."""
    ctx: dict[str, Any] = {"headers": {}}
    for role in ROLES:
        user = await create_user(client, admin, role, f"user_{role}") if role != "admin" else None
        ctx["headers"][role] = user["headers"] if user else admin
        ctx[f"user_{role}"] = user["username"] if user else "admin"
        ctx[f"p_{role}"] = '"' + await create_flow(client, admin, flow_doc(f"p_{role}")) + '"'
        await create_flow(client, admin, flow_doc(f"d_{role}"))
        await create_flow(client, admin, flow_doc(f"dv_{role}"))
        await freeze(client, admin, f"dv_{role}")
        await create_flow(client, admin, flow_doc(f"v_{role}"))
    await create_user(client, admin, "viewer", "bystander")
    for role in ["viewer", *ROLES]:
        if f"doomed_{role}" not in ctx:
            ctx[f"doomed_{role}"] = await create_user(client, admin, "viewer", f"doomed_{role}")
    await create_flow(client, admin, flow_doc("reg"))
    await freeze(client, admin, "reg")
    assert (await client.post("/api/bots", json=BOT, headers=admin)).status_code == 201
    return ctx


async def test_role_matrix(app_client, admin_headers):
    ctx = await prepare(app_client, admin_headers)
    wrong: list[str] = []
    callers = [(None, {}), ("bad token", bearer("not-a-token")), *[(r, ctx["headers"][r]) for r in ROLES]]
    for name, least, ok, build in CASES:
        for caller, headers in callers:
            role = caller if caller in RANK else "viewer"
            method, path, kwargs = build(role, ctx)
            kwargs = {**kwargs, "headers": {**kwargs.get("headers", {}), **headers}}
            response = await app_client.request(method, path, **kwargs)
            if caller not in RANK:
                expected: tuple[int, ...] = (401,)
            elif RANK[caller] >= RANK[least]:
                expected = ok
            else:
                expected = (403,)
            if response.status_code not in expected:
                wrong.append(f"{name} as {caller or 'anonymous'}: {response.status_code}, expected {expected}")
            elif response.status_code in (401, 403):
                body = response.json()
                if set(body) != {"error", "message", "details"} or not body["message"]:
                    wrong.append(f"{name} as {caller}: error body {body}")
    assert not wrong, "\n".join(wrong)
