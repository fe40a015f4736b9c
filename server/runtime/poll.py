"""`botflow poll --bot ID`: fetch a bot's updates by long polling (development) and handle them like webhooks."""
from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from server.runtime.max_client import MaxApiError, MaxClient
from server.runtime.subscribe import CliError, bot_credentials
from server.runtime.webhook import HANDLED
from server.settings import Settings, settings_or_exit

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


async def poll(settings: Settings, bot_id: str, stop: asyncio.Event | None = None) -> None:
    """Start the app (database, runtime), then long-poll the bot's updates into its webhook route."""
    from server.app import create_app

    app = create_app(settings)
    failure: CliError | MaxApiError | None = None
    async with app.lifespan():
        try:
            await _serve(app, settings, bot_id, stop or asyncio.Event())
        except (CliError, MaxApiError) as exc:
            # Raised after the app has shut down: inside its lifespan it would come out wrapped in a group.
            failure = exc
    if failure is not None:
        raise failure


async def _serve(app: Any, settings: Settings, bot_id: str, stop: asyncio.Event) -> None:
    """Check the bot and its subscriptions, then poll until stopped."""
    token, secret = await bot_credentials(app.state.db, bot_id)
    async with MaxClient(settings.max_api_url, rate=settings.max_rate) as client:
        subs = await client.subscriptions(token)
        if subs:
            urls = ", ".join(str(s.get("url")) for s in subs)
            print(f"botflow poll: warning: bot {bot_id!r} has a webhook subscription ({urls}); MAX does "
                  "not serve long polling while one exists. Remove it to poll.", file=sys.stderr)
        deliver, local = webhook_deliverer(app, bot_id, secret)
        print(f"Polling {settings.max_api_url} for bot {bot_id}; Ctrl+C to stop", flush=True)
        try:
            await poll_updates(client, token, deliver, stop)
        finally:
            await local.aclose()


def run(args: Namespace) -> int:
    """Entry point of `botflow poll`; runs until Ctrl+C (exit 0), or reports one error line (exit 1)."""
    settings = settings_or_exit()
    try:
        asyncio.run(poll(settings, args.bot))
    except KeyboardInterrupt:
        print("stopped")
    except (CliError, MaxApiError) as exc:
        print(f"botflow: {exc}", file=sys.stderr)
        return 1
    return 0
