"""Bots: create, change, read (secrets never leave), webhook subscription when a public URL is set."""
from __future__ import annotations

import json
import logging
import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.experiments import ExperimentRow
from server.db.models import BotRow, PublicationRow, utcnow
from server.errors import N_, Conflict, NotFound, Unprocessable
from server.channels.max import urls
from server.channels.max.client import MaxClient
from server.channels.max.updates import HANDLED
from server.services import audit, privacy
from server.services.common import is_slug, iso

log = logging.getLogger("botflow.bots")

SECRET = re.compile(r"^[A-Za-z0-9_-]{5,256}$")
MAX_TOKEN = 4096
MAX_TITLE = 500


def check_fields(values: dict[str, Any]) -> None:
    """One detail per bad field among id, title, token, webhook_secret (those present)."""
    details: list[dict[str, Any]] = []
    if "id" in values and not is_slug(values["id"]):
        details.append({"path": "id", "message": N_("use 1-64 characters: a lowercase Latin letter first, then "
                                                    "lowercase letters, digits, _ or -")})
    title = values.get("title")
    if title is not None and len(title) > MAX_TITLE:
        details.append({"path": "title", "message": f"at most {MAX_TITLE} characters", "code": "too_long",
                        "params": {"max": MAX_TITLE}})
    token = values.get("token")
    if token is not None and (not token or len(token) > MAX_TOKEN or not token.isprintable() or " " in token):
        details.append({"path": "token", "message": N_("the MAX bot token: printable characters without spaces")})
    secret = values.get("webhook_secret")
    if secret is not None and not SECRET.fullmatch(secret):
        details.append({"path": "webhook_secret",
                        "message": N_("5-256 characters of A-Z, a-z, 0-9, _ and - (the MAX secret format)")})
    if "require_tests" in values and not isinstance(values["require_tests"], bool):
        details.append({"path": "require_tests", "message": N_("true or false")})
    privacy.check(values, details)
    if details:
        problems = "; ".join(f"{d['path']}: {d['message']}" for d in details)
        raise Unprocessable(f"The bot settings are not valid: {problems}.", details=details)


def public(row: BotRow, published_at: Any = None, public_url: str | None = None) -> dict[str, Any]:
    """A bot as the API shows it: whether secrets are set, never their values."""
    return {
        "id": row.id, "title": row.title,
        "token_set": bool(row.token), "webhook_secret_set": bool(row.webhook_secret),
        "flow": row.flow_id, "version": row.version, "published_at": iso(published_at),
        "require_tests": bool(row.require_tests), **privacy.public(row),
        "webhook_url": urls.webhook_url(public_url, row.id) if public_url else None,
        "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
    }


async def get_row(session: AsyncSession, bot_id: str) -> BotRow:
    row = await session.get(BotRow, bot_id) if is_slug(bot_id) else None
    if row is None:
        raise NotFound(f"There is no bot '{bot_id}'; GET /api/bots lists the bots.", {"bot": bot_id})
    return row


async def last_published(session: AsyncSession, bot_id: str) -> Any:
    return (await session.execute(
        select(PublicationRow.published_at).where(PublicationRow.bot_id == bot_id)
        .order_by(PublicationRow.id.desc()).limit(1))).scalar_one_or_none()


async def experiments_running(session: AsyncSession) -> dict[str, dict[str, Any]]:
    """Per bot with a running experiment: its flow, the arms' versions and the goal (the editor's funnel
    compares the arms)."""
    rows = (await session.execute(select(ExperimentRow).where(ExperimentRow.running_bot.is_not(None)))).scalars()
    return {r.bot_id: {"id": r.id, "flow": r.flow_id, "versions": [a["version"] for a in json.loads(r.arms)],
                       "goal": r.goal_state} for r in rows}


async def get_bot(session: AsyncSession, bot_id: str, public_url: str | None = None) -> dict[str, Any]:
    row = await get_row(session, bot_id)
    return {**public(row, await last_published(session, bot_id), public_url),
            "experiment": (await experiments_running(session)).get(bot_id)}


async def list_bots(session: AsyncSession, public_url: str | None = None) -> list[dict[str, Any]]:
    rows = (await session.execute(select(BotRow).order_by(BotRow.id))).scalars().all()
    running = await experiments_running(session)
    return [{**public(r, await last_published(session, r.id), public_url), "experiment": running.get(r.id)}
            for r in rows]


async def create_bot(session: AsyncSession, values: dict[str, Any], actor: str | None) -> BotRow:
    """A new bot; 409 if the id is taken."""
    check_fields(values)
    bot_id = values["id"]
    if await session.get(BotRow, bot_id) is not None:
        raise Conflict(f"A bot with id '{bot_id}' already exists; PATCH /api/bots/{bot_id} changes it.",
                       code="bot_exists", params={"bot": bot_id})
    now = utcnow()
    row = BotRow(id=bot_id, title=values.get("title") or bot_id, token=values.get("token"),
                 webhook_secret=values.get("webhook_secret"), require_tests=bool(values.get("require_tests")),
                 created_at=now, updated_at=now, retention_days=privacy.RETENTION_DEFAULT, mask_keys="[]",
                 mask_inputs="[]")
    privacy.apply(row, values)
    session.add(row)
    audit.record(session, actor, "bot.create", f"bot:{bot_id}", token_set=bool(row.token),
                 webhook_secret_set=bool(row.webhook_secret), **privacy.public(row))
    try:
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise Conflict(f"A bot with id '{bot_id}' already exists.", code="bot_exists") from None
    return row


async def update_bot(session: AsyncSession, bot_id: str, values: dict[str, Any], actor: str | None) -> BotRow:
    """Change title, token, webhook secret, require_tests or the privacy fields (fields absent stay as they
    are; null clears a secret)."""
    check_fields(values)
    row = await get_row(session, bot_id)
    changed: list[str] = []
    for name in ("title", "token", "webhook_secret", "require_tests"):
        if name in values:
            value = values[name]
            if name == "title":
                value = value or bot_id
            setattr(row, name, value)
            changed.append(name)
    # Retention and masking changes name their old and new values: who widened what a transcript keeps.
    personal = privacy.apply(row, values)
    changed += [name for name in privacy.FIELDS if name in values]
    row.updated_at = utcnow()
    audit.record(session, actor, "bot.update", f"bot:{bot_id}", fields=changed, **personal)
    await session.commit()
    return row


async def subscribe_webhook(settings: Any, row: BotRow) -> dict[str, Any] | None:
    """With BOTFLOW_PUBLIC_URL set, point MAX's webhook for this bot here; None when there is nothing to do."""
    if not settings.public_url or not row.token or not row.webhook_secret:
        return None
    url = urls.webhook_url(settings.public_url, row.id)
    refused = urls.refusal(url)
    if refused:  # MAX would refuse it: asking would only bring back its error
        return {"url": url, "subscribed": False, "refused": True, "error": refused}
    try:
        async with MaxClient(settings.max_api_url, rate=settings.max_rate) as client:
            await client.subscribe(row.token, url, row.webhook_secret, list(HANDLED))
    except Exception as exc:  # the bot is saved either way; the answer says what went wrong
        log.warning("webhook subscription for bot %s failed: %s", row.id, exc)
        return {"url": url, "subscribed": False, "error": str(exc)[:300]}
    return {"url": url, "subscribed": True}
