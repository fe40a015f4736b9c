"""MAX keeps delivering: check every bot's webhook subscription and subscribe again when it is gone.

MAX drops a subscription whose webhook has not answered 200 for 8 hours. With BOTFLOW_PUBLIC_URL set,
each replica checks `GET /subscriptions` for every bot with a token and a secret every
BOTFLOW_SUBSCRIPTION_CHECK seconds and re-subscribes a missing one. Subscribing is idempotent, so
replicas doing it at the same time do no harm.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from server.db.models import BotRow
from server.metrics import SUBSCRIPTION_UP
from server.runtime.max_client import MaxApiError, MaxClient
from server.runtime.webhook import HANDLED

log = logging.getLogger("botflow.runtime.watchdog")


@dataclass(slots=True)
class Health:
    """What the last check of one bot's subscription found."""

    url: str
    up: bool
    checked_at: float
    error: str | None = None
    resubscribed_at: float | None = None


def webhook_url(public_url: str, bot_id: str) -> str:
    """Where MAX should deliver this bot's updates."""
    return f"{public_url}/webhooks/max/{bot_id}"


class SubscriptionWatchdog:
    """Checks and repairs subscriptions; `health` holds the latest finding per bot for the bot pages."""

    def __init__(self, sessionmaker: Any, client: MaxClient, public_url: str, interval: float) -> None:
        self.sessionmaker = sessionmaker
        self.client = client
        self.public_url = public_url
        self.interval = interval
        self.health: dict[str, Health] = {}
        self._task: asyncio.Task[None] | None = None

    async def _bots(self) -> list[tuple[str, str, str]]:
        async with self.sessionmaker() as session:
            rows = (await session.execute(select(BotRow.id, BotRow.token, BotRow.webhook_secret))).all()
        return [(r.id, r.token, r.webhook_secret) for r in rows if r.token and r.webhook_secret]

    async def check(self, bot_id: str, token: str, secret: str) -> Health:
        """One bot: look the subscription up, subscribe again if it is missing, record the outcome."""
        url = webhook_url(self.public_url, bot_id)
        previous = self.health.get(bot_id)
        health = Health(url, False, time.time(), resubscribed_at=previous.resubscribed_at if previous else None)
        try:
            listed = {s.get("url") for s in await self.client.subscriptions(token)}
            if url in listed:
                health.up = True
            else:
                await self.client.subscribe(token, url, secret, list(HANDLED))
                health.up, health.resubscribed_at = True, time.time()
                log.warning("MAX had no webhook subscription for bot %s; subscribed %s again", bot_id, url,
                            extra={"event": "subscription_restored", "bot": bot_id})
        except MaxApiError as exc:
            health.error = exc.message
            log.warning("subscription check for bot %s failed: %s", bot_id, exc,
                        extra={"event": "subscription_check_failed", "bot": bot_id})
        SUBSCRIPTION_UP.labels(bot=bot_id).set(1 if health.up else 0)
        self.health[bot_id] = health
        return health

    async def check_all(self) -> None:
        """Every bot with a token and a secret, one after another (each call waits for its bot's rate)."""
        bots = await self._bots()
        for bot_id in set(self.health) - {b[0] for b in bots}:  # deleted bots, or bots without a token now
            self.health.pop(bot_id, None)
            try:
                SUBSCRIPTION_UP.remove(bot_id)
            except KeyError:
                pass
        for bot_id, token, secret in bots:
            await self.check(bot_id, token, secret)

    async def run(self) -> None:
        while True:
            try:
                await self.check_all()
            except Exception:  # the database may be down: try again next round
                log.warning("subscription checks failed this round", exc_info=True)
            await asyncio.sleep(self.interval)

    def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name="subscription-watchdog")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
