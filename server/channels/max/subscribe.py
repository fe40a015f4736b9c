"""`botflow max subscribe --bot ID --url URL`: point MAX's webhook for a bot at this server."""
from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from urllib.parse import urlsplit

from server.db.engine import Database
from server.channels.max import urls
from server.channels.max.client import MaxApiError, MaxClient
from server.channels.max.updates import HANDLED
from server.settings import Settings, settings_or_exit


class CliError(Exception):
    """A problem the command reports in one line before exiting with status 1."""


async def bot_credentials(db: Database, bot_id: str) -> tuple[str, str | None]:
    """The stored MAX token and webhook secret of a bot (secrets never leave the server otherwise)."""
    from sqlalchemy.exc import SQLAlchemyError

    from server.db.models import BotRow

    try:
        async with db.session() as session:
            bot = await session.get(BotRow, bot_id)
    except (SQLAlchemyError, OSError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CliError(f"cannot read the bots from the database ({first_line}); "
                       "is it reachable and migrated (botflow db upgrade)?") from None
    if bot is None:
        raise CliError(f"there is no bot {bot_id!r}")
    if not bot.token:
        raise CliError(f"bot {bot_id!r} has no MAX token stored; give it one first")
    return bot.token, bot.webhook_secret


def webhook_url(url: str, bot_id: str) -> str:
    """The URL to subscribe (a bare base URL gets this server's webhook path for the bot appended), or
    CliError saying what MAX needs when MAX would refuse it."""
    refused = urls.refusal(url)
    if refused:
        raise CliError(f"--url {refused}")
    if urlsplit(url.strip()).path in ("", "/"):
        return urls.webhook_url(url.strip(), bot_id)
    return url.strip()


async def subscribe(settings: Settings, bot_id: str, url: str) -> list[dict]:
    """Subscribe the bot's webhook with its stored secret; return the bot's subscriptions afterwards."""
    target = webhook_url(url, bot_id)
    db = Database(settings.database_url)
    try:
        token, secret = await bot_credentials(db, bot_id)
    finally:
        await db.dispose()
    if not secret:
        raise CliError(f"bot {bot_id!r} has no webhook secret; set one first so deliveries can be checked")
    async with MaxClient(settings.max_api_url, rate=settings.max_rate) as client:
        await client.subscribe(token, target, secret, list(HANDLED))
        return await client.subscriptions(token)


def run(args: Namespace) -> int:
    """Entry point of `botflow max subscribe`; prints the subscriptions, exit 0, or one error line and 1."""
    try:
        settings = settings_or_exit()
        target = webhook_url(args.url, args.bot)
        subs = asyncio.run(subscribe(settings, args.bot, args.url))
    except (CliError, MaxApiError) as exc:
        print(f"botflow: {exc}", file=sys.stderr)
        return 1
    print(f"bot {args.bot}: MAX now delivers {', '.join(HANDLED)} to {target}")
    others = [s["url"] for s in subs if s.get("url") != target]
    if others:
        print(f"note: the bot also has webhook subscriptions at {', '.join(others)}", file=sys.stderr)
    return 0
