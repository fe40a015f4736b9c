"""Users and API tokens: /api/users."""
from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, delete, get, patch, post

from server.api.body import fields, json_body
from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.errors import Forbidden, Unprocessable
from server.services import users as user_service

MAX_PASSWORD = 1024


class UserController(Controller):
    """Admins manage users; anyone may mint a new token for themself."""

    path = "/api/users"
    tags = ["users"]

    @post("/", guards=[requires_role("admin")], status_code=201,
          summary="Create a user; the API token in the answer is shown this once")
    async def create(self, request: Request, db_session: DbSession) -> Response:
        body = fields(await json_body(request), {
            "username": (str, True), "role": (str, True), "password": ((str, type(None)), False)})
        password = body.get("password")
        if password is not None and not 1 <= len(password) <= MAX_PASSWORD:
            raise Unprocessable(f"password must be 1-{MAX_PASSWORD} characters.",
                                details=[{"path": "password", "message": "wrong length"}])
        user, token = await user_service.create_user(
            db_session, body["username"], body["role"], password, actor(request))
        return Response({"username": user.username, "role": user.role, "token": token}, status_code=201,
                        headers={"Cache-Control": "no-store"})

    @get("/", guards=[requires_role("admin")], summary="Usernames and roles")
    async def list_users(self, db_session: DbSession) -> list[dict[str, Any]]:
        return await user_service.list_users(db_session)

    @patch("/{username:str}", guards=[requires_role("viewer")],
           summary="Change a user's role (admin) or password (admin, or the user themself)")
    async def change(self, username: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        body = fields(await json_body(request), {"role": (str, False), "password": (str, False)})
        user = request.scope["user"]
        if not user.has_role("admin") and (user.username != username or "role" in body):
            raise Forbidden("Only an admin can change roles or someone else's password.")
        password = body.get("password")
        if password is not None and not 1 <= len(password) <= MAX_PASSWORD:
            raise Unprocessable(f"password must be 1-{MAX_PASSWORD} characters.",
                                details=[{"path": "password", "message": "wrong length"}])
        return await user_service.update_user(db_session, username, body.get("role"), password, actor(request))

    @delete("/{username:str}", guards=[requires_role("admin")], status_code=204,
            summary="Remove a user and their tokens")
    async def remove(self, username: PathStr, request: Request, db_session: DbSession) -> None:
        await user_service.delete_user(db_session, username, actor(request))

    @get("/me", guards=[requires_role("viewer")], summary="Who the token belongs to")
    async def me(self, request: Request) -> dict[str, Any]:
        user = request.scope["user"]
        return {"username": user.username, "role": user.role}

    @post("/{username:str}/tokens", guards=[requires_role("viewer")], status_code=201,
          summary="A new API token for a user (admin, or the user themself), shown once")
    async def new_token(self, username: PathStr, request: Request, db_session: DbSession) -> Response:
        user = request.scope["user"]
        if user.username != username and not user.has_role("admin"):
            raise Forbidden("Only an admin can create tokens for someone else.")
        token = await user_service.issue_token(db_session, username, actor(request))
        return Response({"username": username, "token": token}, status_code=201,
                        headers={"Cache-Control": "no-store"})
