"""Driving the whole app for runtime tests: start it, publish flows, post MAX updates to its webhook."""
from __future__ import annotations

import itertools
import json
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import asyncio

import httpx
from sqlalchemy import select

from server.app import create_app
from server.db.models import BotRow, FlowRow, PublicationRow, VersionRow
from server.settings import Settings
from tests.fakemax import FAKE_TOKEN

ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "runtime-test-admin-token"
SECRET = "hook_secret-123"
_ids = itertools.count(1)


def registration() -> dict[str, Any]:
    return json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))


def msg(user: int, text: str | None, *, mid: str | None = None, chat: int | None = None,
        attachments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"mid": mid or f"mid.{next(_ids):032x}", "seq": 1}
    if text is not None:
        body["text"] = text
    if attachments is not None:
        body["attachments"] = attachments
    return {"update_type": "message_created", "timestamp": 1785182044286, "user_locale": "ru",
            "message": {"sender": {"user_id": user, "first_name": "Иван", "is_bot": False},
                        "recipient": {"chat_id": chat or user + 1_000_000, "chat_type": "dialog"},
                        "timestamp": 1785182044286, "body": body}}


def press(user: int, payload: str, *, callback_id: str | None = None, chat: int | None = None) -> dict[str, Any]:
    return {"update_type": "message_callback", "timestamp": 1785182382767,
            "callback": {"timestamp": 1785182382767, "callback_id": callback_id or f"cb-{next(_ids)}",
                         "payload": payload, "user": {"user_id": user, "first_name": "Иван", "is_bot": False}},
            "message": {"recipient": {"chat_id": chat or user + 1_000_000, "chat_type": "dialog"},
                        "body": {"mid": "mid.00000000000000000000000000000001", "text": "..."}}}


def started(user: int, payload: str | None = None, *, timestamp: int | None = None) -> dict[str, Any]:
    return {"update_type": "bot_started", "timestamp": timestamp or 1573226679188 + next(_ids),
            "chat_id": user + 1_000_000, "user": {"user_id": user, "first_name": "Boris", "is_bot": False},
            "payload": payload, "user_locale": "ru"}


def texts(fake: Any, user: int) -> list[str]:
    """Texts the fake MAX received for a user's dialog (by its chat, or by the user when a reply answers no
    update of theirs: a timer, an event), oldest first."""
    chat, by_user = str(user + 1_000_000), str(user)
    return [c["json"]["text"] for c in fake.requests("POST", "/messages")
            if c["query"].get("chat_id") == chat or c["query"].get("user_id") == by_user]


class Harness:
    """One running app plus helpers to publish and deliver."""

    def __init__(self, app: Any, client: httpx.AsyncClient) -> None:
        self.client = client
        self.app = app
        self.version: int | None = None  # what `serving` published

    @property
    def runtime(self) -> Any:
        return self.app.state.runtime

    async def bot(self, bot_id: str, *, token: str = FAKE_TOKEN, secret: str = SECRET) -> None:
        async with self.app.state.db.session() as s:
            if await s.get(BotRow, bot_id) is None:
                s.add(BotRow(id=bot_id, title=bot_id, token=token, webhook_secret=secret))
                await s.commit()
        await self.runtime.bot_changed(bot_id)

    async def publish(self, bot_id: str, document: dict[str, Any], sessions: str = "keep") -> int:
        """Freeze `document` as the flow's next version and publish it to the bot."""
        flow_id = document["id"]
        async with self.app.state.db.session() as s:
            flow = await s.get(FlowRow, flow_id)
            if flow is None:
                flow = FlowRow(id=flow_id, title=document.get("title", ""), document=json.dumps(document),
                               revision="r1", version_seq=0)
                s.add(flow)
            flow.version_seq += 1
            number = flow.version_seq
            s.add(VersionRow(flow_id=flow_id, number=number, document=json.dumps(document, ensure_ascii=False),
                             hash=f"sha256:{flow_id}{number}", validation="{}"))
            bot = (await s.execute(select(BotRow).where(BotRow.id == bot_id))).scalar_one()
            bot.flow_id, bot.version = flow_id, number
            s.add(PublicationRow(bot_id=bot_id, flow_id=flow_id, version=number, sessions=sessions))
            await s.commit()
        await self.runtime.published(bot_id, flow_id, number, sessions)
        return number

    async def deliver(self, bot_id: str, update: Any, *, secret: str = SECRET) -> Any:
        return await self.client.post(f"/webhooks/max/{bot_id}", json=update,
                                      headers={"X-Max-Bot-Api-Secret": secret})

    async def api(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", **kwargs.pop("headers", {})}
        return await self.client.request(method, path, headers=headers, **kwargs)


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Run the ASGI lifespan in this event loop, so the app and the test share one loop."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    task = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                   inbox.get, outbox.put))
    message = await outbox.get()
    if message["type"] != "lifespan.startup.complete":
        raise RuntimeError(f"app start-up failed: {message.get('message')}")
    try:
        yield
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        await outbox.get()
        await task


@asynccontextmanager
async def running(database_url: str, max_url: str, redis_url: str | None, *,
                  max_rate: float = 10_000, action_allow: tuple[str, ...] = (),
                  redis_min_replicas: int = 0) -> AsyncIterator[Harness]:
    """The app with its lifespan (migrations, runtime start/stop) around the block."""
    settings = Settings(database_url=database_url, redis_url=redis_url, max_api_url=max_url,
                        bootstrap_token=ADMIN_TOKEN, max_rate=max_rate, action_allow=action_allow,
                        redis_min_replicas=redis_min_replicas)
    app = create_app(settings)
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://botflow.test", timeout=30) as client:
            yield Harness(app, client)


@asynccontextmanager
async def replicas(count: int, database_url: str, max_url: str,
                   redis_url: str | None) -> AsyncIterator[list[Harness]]:
    """`count` apps sharing one database (and Redis, if given), as replicas behind a balancer."""
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(running(database_url, max_url, redis_url)) for _ in range(count)]


@asynccontextmanager
async def serving(request: Any, backend: str, max_url: str, bot: str, flow: dict[str, Any]) -> AsyncIterator[Harness]:
    """The app with `bot` serving `flow` (its version in `h.version`): dialogs in Redis (`backend` "redis",
    with SQLite), in SQLite ("sql" or "sqlite") or in PostgreSQL ("postgres", a fresh database)."""
    from tests.integration.runtime_support import REDIS_URL

    redis_url = None
    if backend == "redis":
        request.getfixturevalue("monkeypatch").setenv("BOTFLOW_REDIS_PREFIX", request.getfixturevalue("redis_prefix"))
        redis_url = REDIS_URL
    database = request.getfixturevalue("pg_fresh_url" if backend == "postgres" else "sqlite_url")
    async with running(database, max_url, redis_url) as h:
        await h.bot(bot)
        h.version = await h.publish(bot, flow)
        yield h
