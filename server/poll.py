"""`botflow poll --bot ID`: fetch a bot's updates by long polling (development) and handle them like webhooks."""
from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from typing import Any

from server.channels.max.client import MaxApiError, MaxClient
from server.channels.max.poll import poll_updates, webhook_deliverer
from server.channels.max.subscribe import CliError, bot_credentials
from server.settings import Settings, settings_or_exit


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
