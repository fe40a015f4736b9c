"""Users and API tokens: /api/users."""
from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, delete, get, patch, post

from server.bodies import json_body
from server.body_fields import Spec, fields
from server.api.flows import actor
from server.api.params import DbSession, PathInt, PathStr
from server.auth import CurrentUser, login_session, requires_role
from server.errors import Forbidden, Unprocessable
from server.services import tokens as token_service
from server.services import users as user_service
from server.services.common import iso

CREATE_FIELDS: Spec = {"username": (str, True), "role": (str, True), "password": ((str, type(None)), False)}
CHANGE_FIELDS: Spec = {"role": (str, False), "password": (str, False), "current_password": (str, False)}
TOKEN_FIELDS: Spec = {"label": (str, False), "expires_in": ((int, type(None)), False), "expires_at": ((str, type(None)), False)}


def may_manage(user: CurrentUser, username: str, doing: str) -> None:
    """Admins manage anyone's tokens; others only their own."""
    if user.username.lower() != username.lower() and not user.has_role("admin"):
        raise Forbidden(f"Only an admin can {doing} for someone else.")


class UserController(Controller):
    """Admins manage users; anyone may mint, list and revoke tokens of their own."""

    path = "/api/users"
    tags = ["users"]

    @post("/", guards=[requires_role("admin")], status_code=201,
          summary="Create a user; the API token in the answer is shown this once")
    async def create(self, request: Request, db_session: DbSession) -> Response:
        body = fields(await json_body(request), CREATE_FIELDS)
        user, token = await user_service.create_user(
            db_session, body["username"], body["role"], body.get("password"), actor(request))
        return Response({"username": user.username, "role": user.role, "token": token}, status_code=201,
                        headers={"Cache-Control": "no-store"})

    @get("/", guards=[requires_role("admin")], summary="Usernames and roles")
    async def list_users(self, db_session: DbSession) -> list[dict[str, Any]]:
        return await user_service.list_users(db_session)

    @patch("/{username:str}", guards=[requires_role("viewer")],
           summary="Change a user's role (admin) or password (in a browser session: your own with "
                   "current_password, or an admin for anyone; never with an API token); "
                   "a new password ends the user's browser sessions")
    async def change(self, username: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        body = fields(await json_body(request), CHANGE_FIELDS)
        user: CurrentUser = request.scope["user"]
        if "role" in body and not user.has_role("admin"):
            raise Forbidden("Only an admin can change roles.")
        if "password" not in body and "role" not in body:
            raise Unprocessable("Give a role or a password to change.",
                                details=[{"path": "", "message": "nothing to change"}])
        if "password" in body:
            row = await user_service.change_password(db_session, user, username, body["password"],
                                                     body.get("current_password"))
            if row.id == user.id and request.scope.get("auth") == "session":
                # The browser that changed the password stays logged in; every other session ends.
                login_session(request, CurrentUser(row.id, row.username, row.role, row.session_version))
        if "role" in body:
            return await user_service.update_user(db_session, username, body["role"], actor(request))
        row = await user_service.get_user(db_session, username)
        return {"username": row.username, "role": row.role, "created_at": iso(row.created_at)}

    @delete("/{username:str}", guards=[requires_role("admin")], status_code=204,
            summary="Remove a user and their tokens (never the last admin)")
    async def remove(self, username: PathStr, request: Request, db_session: DbSession) -> None:
        await user_service.delete_user(db_session, username, actor(request))

    @get("/me", guards=[requires_role("viewer")], summary="Who the token belongs to")
    async def me(self, request: Request) -> dict[str, Any]:
        user = request.scope["user"]
        return {"username": user.username, "role": user.role}

    @post("/{username:str}/tokens", guards=[requires_role("viewer")], status_code=201,
          summary="A new API token for a user (admin, or the user themself), shown once; "
                  "optionally expiring (expires_in seconds or expires_at)")
    async def new_token(self, username: PathStr, request: Request, db_session: DbSession) -> Response:
        may_manage(request.scope["user"], username, "create tokens")
        body = fields(await json_body(request, required=False), TOKEN_FIELDS)
        label = body.get("label", token_service.DEFAULT_LABEL).strip() or token_service.DEFAULT_LABEL
        if not token_service.usable_label(label):
            raise Unprocessable("label must be at most 64 characters and not 'bootstrap'.",
                                details=[{"path": "label", "message": "not a usable label"}])
        expires_at = token_service.expiry(body.get("expires_in"), body.get("expires_at"))
        owner = await user_service.get_user(db_session, username)
        expires_at = token_service.within_scope(request.scope["user"], owner, expires_at)
        answer = await token_service.issue(db_session, owner, actor(request), label, expires_at)
        return Response(answer, status_code=201, headers={"Cache-Control": "no-store"})

    @get("/{username:str}/tokens", guards=[requires_role("viewer")],
         summary="A user's API tokens (admin, or the user themself): ids, labels and expiry, never the tokens")
    async def tokens(self, username: PathStr, request: Request, db_session: DbSession) -> list[dict[str, Any]]:
        may_manage(request.scope["user"], username, "list tokens")
        return await token_service.listed(db_session, await user_service.get_user(db_session, username))

    @delete("/{username:str}/tokens/{token_id:int}", guards=[requires_role("viewer")], status_code=204,
            summary="Revoke one API token (admin, or the user themself)")
    async def revoke(self, username: PathStr, token_id: PathInt, request: Request, db_session: DbSession) -> None:
        may_manage(request.scope["user"], username, "revoke tokens")
        owner = await user_service.get_user(db_session, username)
        await token_service.revoke(db_session, owner, token_id, actor(request))
