"""Retries what could not be delivered at once: replies (in order per user) and webhook actions."""
from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any, Callable

import httpx

from flows.session import Reply
from server.runtime.max_client import MaxApiError, MaxClient
from server.runtime.max_format import message_body
from server.runtime.loop import repeat
from server.runtime.stores.base import DialogStore
from server.runtime.versions import BotInfo, Catalog

log = logging.getLogger("botflow.runtime.outbox")

GIVE_UP = 24 * 3600.0  # replies and actions older than this are dropped (and logged)
LEASE = 60.0  # a claimed queue comes back to any replica after this, should its claimer die


def backoff(attempts: int) -> float:
    """Seconds before the next attempt: 1, 2, 4 ... capped at 5 minutes, with jitter."""
    return min(300.0, 2.0 ** max(0, attempts - 1)) * random.uniform(0.8, 1.2)


class MaxSender:
    """Turns outbox items into MAX calls."""

    def __init__(self, client: MaxClient) -> None:
        self.client = client

    async def __call__(self, bot: BotInfo, item: dict[str, Any]) -> None:
        if not bot.token:
            raise MaxApiError(None, "no.token", f"bot {bot.id} has no token", False)
        if item["op"] == "answer":
            await self.client.answer_callback(bot.token, item["callback_id"], notification=item.get("notification"))
            return
        body = message_body(Reply(item["text"], item.get("buttons") or []))
        if item.get("chat_id") is not None:
            await self.client.send_message(bot.token, chat_id=item["chat_id"], body=body)
        else:
            await self.client.send_message(bot.token, user_id=item["user_id"], body=body)


class Outbox:
    """Background delivery of queued replies and webhook actions; any replica may take any queue."""

    def __init__(self, store: DialogStore, catalog: Catalog, send: Callable[..., Any],
                 http: httpx.AsyncClient, *, clock: Callable[[], float] = time.time, interval: float = 0.2) -> None:
        self.store = store
        self.catalog = catalog
        self.send = send
        self.http = http
        self.clock = clock
        self.interval = interval

    async def run(self) -> None:
        """Poll forever; each pass drains what is due."""
        await repeat("outbox", self.pass_once, self.interval, log)

    async def pass_once(self) -> None:
        now = self.clock()
        users = await self.store.outbox_due(now, LEASE)
        actions = await self.store.actions_due(now, LEASE)
        await asyncio.gather(*(self._drain(bot, user) for bot, user in users),
                             *(self._action(item) for item in actions))

    async def _drain(self, bot_id: str, user: str) -> None:
        """Send one user's queue head first; stop at the first failure so order holds."""
        while True:
            item = await self.store.outbox_head(bot_id, user)
            if item is None:
                await self.store.outbox_done(bot_id, user, "")
                return
            bot = await self.catalog.bot(bot_id)
            if bot is None or self.clock() - item.get("queued", self.clock()) > GIVE_UP:
                log.warning("dropping an undeliverable %s for %s/%s", item["op"], bot_id, user)
            else:
                try:
                    await self.send(bot, item)
                except MaxApiError as exc:
                    if exc.retryable:
                        item["attempts"] = item.get("attempts", 0) + 1
                        item.setdefault("queued", self.clock())
                        wait = max(backoff(item["attempts"]), exc.retry_after or 0.0)
                        await self.store.outbox_later(bot_id, user, item, self.clock() + wait)
                        return
                    log.warning("bot %s: queued %s refused: %s", bot_id, item["op"], exc)
                except Exception:  # noqa: BLE001 - unknown failure: retry later, keep the order
                    item["attempts"] = item.get("attempts", 0) + 1
                    item.setdefault("queued", self.clock())
                    await self.store.outbox_later(bot_id, user, item, self.clock() + backoff(item["attempts"]))
                    return
            if not await self.store.outbox_done(bot_id, user, item["id"]):
                return

    async def _action(self, item: dict[str, Any]) -> None:
        """POST the dialog data to the action's URL; retried with backoff for up to a day."""
        try:
            response = await self.http.post(item["url"], json=item["data"], timeout=10.0)
            if response.status_code < 300:
                await self.store.action_done(item["id"])
                return
            permanent = 400 <= response.status_code < 500 and response.status_code not in (408, 425, 429)
            problem = f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            permanent, problem = False, f"{type(exc).__name__}: {exc}"
        item["attempts"] = item.get("attempts", 0) + 1
        if permanent or self.clock() - item.get("created", self.clock()) > GIVE_UP:
            log.warning("webhook action to %s abandoned after %d attempts (%s)", item["url"], item["attempts"], problem)
            await self.store.action_done(item["id"])
            return
        await self.store.action_later(item, self.clock() + backoff(item["attempts"]))
