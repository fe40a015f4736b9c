"""What a publish will do to the running dialogs, counted before it (and kept on the publication record)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from flows.model import Flow
from server.errors import BadRequest
from server.runtime.publish_sessions import MODES as SESSION_MODES, continues
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.ports import Listing
from server.runtime.stores.listing import CountKey, count_rows
from server.services.bots import get_row as get_bot_row
from server.services.versions import version_flow

log = logging.getLogger("botflow.publishing")


@dataclass(slots=True)
class Forecast:
    """Running dialogs, and how many of them go on or are dropped by the publish."""

    running: dict[CountKey, int] = field(default_factory=dict)
    continuing: int = 0
    dropped: dict[CountKey, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.running.values())

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


def forecast(counts: dict[CountKey, int], target: Flow, mode: str) -> Forecast:
    """`publish_sessions.continues` for every counted group of dialogs."""
    found = Forecast(running=dict(counts))
    for key, n in counts.items():
        if continues(mode, target, *key):
            found.continuing += n
        else:
            found.dropped[key] = n
    return found


def view(found: Forecast) -> dict[str, Any]:
    """The preview as the API and the publish form show it."""
    return {"running": count_rows(found.running), "total": found.total, "continuing": found.continuing,
            "dropped": found.dropped_total, "dropped_states": count_rows(found.dropped)}


def check_mode(mode: str) -> str:
    if mode not in SESSION_MODES:
        raise BadRequest(f"sessions must be one of {', '.join(SESSION_MODES)}, not {mode!r}.")
    return mode


async def of_target(store: Listing, bot_id: str, target: Flow, mode: str) -> Forecast:
    """Count the bot's running dialogs now and foresee what `mode` does to them."""
    return forecast(await store.dialog_counts(bot_id), target, mode)


async def preview(db: AsyncSession, store: Listing, bot_id: str, flow_id: str, version: int,
                  mode: str) -> dict[str, Any]:
    """The preview of publishing `flow_id` version `version` to the bot with `mode` (404s as publish's)."""
    await get_bot_row(db, bot_id)
    target = await version_flow(db, flow_id, version)
    found = await of_target(store, bot_id, target, check_mode(mode))
    return {"bot": bot_id, "flow": flow_id, "version": version, "sessions": mode, **view(found)}


async def counted(db: AsyncSession, store: Listing | None, bot_id: str, flow_id: str, version: int,
                  mode: str) -> Forecast | None:
    """The forecast a publication records; None when the dialog store cannot be read right now."""
    if store is None:
        return None
    try:
        return await of_target(store, bot_id, await version_flow(db, flow_id, version), mode)
    except StoreUnavailable as exc:  # the publish goes on; its record says the counts are unknown
        log.warning("counting dialogs before publishing to bot %s failed: %s", bot_id, exc)
        return None
