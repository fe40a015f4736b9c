"""Bots and publishing: /api/bots."""
from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, patch, post, put

from server.bodies import json_body
from server.body_fields import Spec, fields
from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.errors import BadRequest, Unavailable, Unprocessable
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.ports import DialogStore
from server.services import bots as bot_service
from server.services import publish_preview, publishing
from server.runtime.lifecycle import runtime_if_started

OPTIONAL_STR = (str, type(None))
BOT_FIELDS: Spec = {"id": (str, True), "title": (OPTIONAL_STR, False), "token": (OPTIONAL_STR, False),
              "webhook_secret": (OPTIONAL_STR, False), "require_tests": (bool, False),
              "retention_days": (int, False), "mask_keys": (list, False), "mask_inputs": (list, False)}
CHANGE_FIELDS: Spec = {**BOT_FIELDS, "id": (str, False)}
PUBLISH_FIELDS: Spec = {"flow": (str, True), "version": ((int, type(None)), False), "sessions": (OPTIONAL_STR, False)}


def runtime_store(request: Request) -> DialogStore | None:
    """The running dialogs' store, when the runtime runs in this process."""
    runtime = runtime_if_started(request.app)
    return runtime.store if runtime is not None else None


async def bot_changed(request: Request, bot_id: str) -> None:
    runtime = runtime_if_started(request.app)
    if runtime is not None:
        await runtime.bot_changed(bot_id)


async def change_bot(bot_id: str, request: Request, db_session: DbSession) -> dict[str, Any]:
    """PATCH and PUT: fields absent stay as they are."""
    body = fields(await json_body(request), CHANGE_FIELDS)
    if "id" in body and body["id"] != bot_id:
        raise Unprocessable(f"The body's id '{body['id']}' differs from the bot '{bot_id}' in the URL; "
                            "bot ids cannot be changed.", details=[{"path": "id", "message": f"must be '{bot_id}'"}])
    body.pop("id", None)
    row = await bot_service.update_bot(db_session, bot_id, body, actor(request))
    await bot_changed(request, bot_id)
    settings = request.app.state.settings
    answer = await bot_service.get_bot(db_session, bot_id, settings.public_url)
    if {"token", "webhook_secret"} & set(body):
        subscription = await bot_service.subscribe_webhook(settings, row)
        if subscription is not None:
            answer["webhook"] = subscription
    return answer


class BotController(Controller):
    """Bot settings (admin), what each bot serves (viewer), publishing (publisher)."""

    path = "/api/bots"
    tags = ["bots"]

    @post("/", guards=[requires_role("admin")], status_code=201,
          summary="Create a bot; token and webhook secret are stored, never returned")
    async def create(self, request: Request, db_session: DbSession) -> Response:
        body = fields(await json_body(request), BOT_FIELDS)
        row = await bot_service.create_bot(db_session, body, actor(request))
        await bot_changed(request, row.id)
        settings = request.app.state.settings
        answer = bot_service.public(row, None, settings.public_url)
        subscription = await bot_service.subscribe_webhook(settings, row)
        if subscription is not None:
            answer["webhook"] = subscription
        return Response(answer, status_code=201, headers={"Location": f"/api/bots/{row.id}"})

    @get("/", guards=[requires_role("viewer")], summary="Bots with what they serve (secrets masked)")
    async def list_bots(self, request: Request, db_session: DbSession) -> list[dict[str, Any]]:
        return await bot_service.list_bots(db_session, request.app.state.settings.public_url)

    @get("/{bot_id:str}", guards=[requires_role("viewer")], summary="One bot (secrets masked)")
    async def read(self, bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        return await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)

    @patch("/{bot_id:str}", guards=[requires_role("admin")], summary="Change title, token or webhook secret")
    async def change(self, bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        return await change_bot(bot_id, request, db_session)

    @put("/{bot_id:str}", guards=[requires_role("admin")], summary="Same as PATCH: change bot settings")
    async def replace(self, bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        return await change_bot(bot_id, request, db_session)

    @post("/{bot_id:str}/publish", guards=[requires_role("publisher")], status_code=200,
          summary="Serve a version from now on; sessions keep | migrate | reset")
    async def publish(self, bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        body = fields(await json_body(request), PUBLISH_FIELDS)
        version = body.get("version")
        if version is not None and not 1 <= version <= 2**31 - 1:
            raise Unprocessable("version must be a version number from 1.",
                                details=[{"path": "version", "message": "out of range"}])
        record = await publishing.publish(db_session, bot_id, body["flow"], version,
                                          body.get("sessions") or "keep", actor(request), runtime_store(request))
        await publishing.notify_runtime(runtime_if_started(request.app), record)
        return record

    @get("/{bot_id:str}/publish/preview", guards=[requires_role("viewer")],
         summary="What a publish would do to the running dialogs; sessions keep | migrate | reset")
    async def publish_preview(self, bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        query = request.query_params
        flow_id = (query.get("flow") or "").strip()
        if not flow_id:
            raise BadRequest("Give the flow to publish: ?flow=<flow id>&version=<n>&sessions=keep|migrate|reset.")
        raw = (query.get("version") or "").strip()
        if raw and (not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 2**31 - 1):
            raise BadRequest(f"version must be a version number from 1, not {raw!r}.")
        mode = publish_preview.check_mode(query.get("sessions") or "keep")
        await bot_service.get_row(db_session, bot_id)
        version = await publishing.resolve_version(db_session, flow_id, int(raw) if raw else None)
        store = runtime_store(request)
        if store is None:
            raise Unavailable("The runtime is not running, so there are no dialogs to count.")
        try:
            return await publish_preview.preview(db_session, store, bot_id, flow_id, version, mode)
        except StoreUnavailable as exc:
            raise Unavailable(f"Dialog storage is unreachable: {exc}") from exc

    @get("/{bot_id:str}/publications", guards=[requires_role("viewer")],
         summary="Publication history, newest first")
    async def publications(self, bot_id: PathStr, db_session: DbSession) -> list[dict[str, Any]]:
        return await publishing.publications(db_session, bot_id)
