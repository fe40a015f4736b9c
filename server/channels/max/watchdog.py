"""MAX keeps delivering: check every bot's webhook subscription and subscribe again when it is gone.

MAX drops a subscription whose webhook has not answered 200 for 8 hours. Each replica checks
`GET /subscriptions` for every bot with a token and a secret every BOTFLOW_SUBSCRIPTION_CHECK seconds.
With BOTFLOW_PUBLIC_URL set it re-subscribes a missing one (subscribing is idempotent, so replicas doing it
at the same time do no harm); without it, it only looks for any subscription to this bot's webhook path,
so the bot's page can say when MAX no longer lists one. An address MAX would refuse is never sent.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select

from server.db.models import BotRow
from server.metrics import SUBSCRIPTION_UP
from server.channels.max.client import MaxApiError, MaxClient
from server.channels.max.urls import refusal, webhook_path, webhook_url
from server.channels.max.updates import HANDLED

log = logging.getLogger("botflow.runtime.watchdog")
OBSERVE_FIRST = 60.0  # seconds before the first look without a public address


@dataclass(slots=True)
class Health:
    """What the last check of one bot's subscription found."""

    url: str | None  # the subscribed address (or, with a public address, the one it should be)
    up: bool
    checked_at: float
    error: str | None = None
    resubscribed_at: float | None = None
    missing: bool = False  # MAX answered and lists no subscription to this bot's webhook
    refused: bool = False  # the public address is one MAX refuses (not https, not port 443, an IP)


class SubscriptionWatchdog:
    """Checks and repairs subscriptions; `health` holds the latest finding per bot for the bot pages."""

    def __init__(self, sessionmaker: Any, client: MaxClient, public_url: str | None, interval: float) -> None:
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
        """One bot: look the subscription up, subscribe again if it is missing (with a public address MAX
        takes), record the outcome."""
        url = webhook_url(self.public_url, bot_id) if self.public_url else None
        previous = self.health.get(bot_id)
        health = Health(url, False, time.time(), resubscribed_at=previous.resubscribed_at if previous else None)
        try:
            listed = [s.get("url") for s in await self.client.subscriptions(token)]
            found = url if url in listed else next(
                (u for u in listed if isinstance(u, str) and urlsplit(u).path.rstrip("/") == webhook_path(bot_id)),
                None)
            if found is not None:
                health.up, health.url = True, found
            elif url is None:
                health.missing = True
            elif refusal(url):
                health.missing, health.refused, health.error = True, True, refusal(url)
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
        if not self.public_url:  # only looking: no hurry at start-up, the first look comes a minute later
            await asyncio.sleep(min(self.interval, OBSERVE_FIRST))
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
