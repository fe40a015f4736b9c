"""Long polling of MAX's `GET /updates` (development): each update handed to the webhook route in order."""
from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from server.channels.max.client import MaxApiError, MaxClient
from server.channels.max.subscribe import CliError
from server.channels.max.updates import HANDLED

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
BACKOFF_MAX = 30.0


class Redeliver(Exception):
    """The update could not be handled just now (storage down, overload): offer it again later."""


async def _back_off(stop: asyncio.Event, delay: float, why: object) -> float:
    """Say why, sleep `delay` (waking at once when asked to stop); return the next, doubled delay."""
    print(f"botflow poll: {why}; retrying in {delay:.0f} s", file=sys.stderr)
    try:
        await asyncio.wait_for(stop.wait(), delay)
    except TimeoutError:
        pass
    return min(delay * 2, BACKOFF_MAX)


async def _unless_stopped(call: Awaitable[dict[str, Any]], stop: asyncio.Event) -> dict[str, Any] | None:
    """The call's result, or None as soon as `stop` is set (a long poll may otherwise hold for 30 s)."""
    fetch = asyncio.ensure_future(call)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait((fetch, stopped), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (fetch, stopped):
            if not task.done():
                task.cancel()
    return fetch.result() if fetch.done() and not fetch.cancelled() else None


async def _deliver_until_done(deliver: Deliver, update: dict[str, Any], stop: asyncio.Event) -> bool:
    """Hand one update over, retrying with backoff as MAX would; False when stopped before it went through."""
    delay = 1.0
    while not stop.is_set():
        try:
            await deliver(update)
            return True
        except Redeliver as exc:
            delay = await _back_off(stop, delay, exc)
    return False


async def poll_updates(client: MaxClient, token: str, deliver: Deliver, stop: asyncio.Event, *,
                       timeout: int = 30, types: Sequence[str] = HANDLED) -> None:
    """Long-poll GET /updates and deliver each update in order until `stop` is set.

    The marker moves on only after a whole page is delivered, so an interrupted run sees the rest again
    (duplicates are the runtime's to recognise, as with webhook retries).
    """
    marker: int | None = None
    delay = 1.0
    while not stop.is_set():
        try:
            page = await _unless_stopped(
                client.get_updates(token, marker=marker, timeout=timeout, types=list(types)), stop)
        except MaxApiError as exc:
            if not exc.retryable:
                raise
            delay = await _back_off(stop, delay, exc)
            continue
        if page is None:
            return
        delay = 1.0
        for update in page.get("updates") or []:
            if not await _deliver_until_done(deliver, update, stop):
                return
        if page.get("marker") is not None:
            marker = page["marker"]


def webhook_deliverer(app: Any, bot_id: str, secret: str | None) -> tuple[Deliver, httpx.AsyncClient]:
    """A Deliver that posts updates to the app's own webhook route in-process (the live path exactly)."""
    local = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://botflow.poll")
    headers = {"X-Max-Bot-Api-Secret": secret} if secret else {}

    async def deliver(update: dict[str, Any]) -> None:
        response = await local.post(f"/webhooks/max/{bot_id}", json=update, headers=headers)
        kind = update.get("update_type", "?")
        if response.status_code == 200:
            print(f"{kind}: handled")
        elif response.status_code == 403:
            raise CliError(f"the webhook refused bot {bot_id!r}'s stored secret (403)")
        elif response.status_code == 429 or response.status_code >= 500:
            raise Redeliver(f"{kind}: the runtime answered {response.status_code}")
        else:
            # MAX would retry a refused update for hours; a malformed one will never pass, so skip it.
            print(f"{kind}: refused with {response.status_code}: {response.text[:200]}", file=sys.stderr)

    return deliver, local
