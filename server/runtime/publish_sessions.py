"""What a publish does to running dialogs: keep (nothing), reset (drop them) or migrate (move if possible)."""
from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

from flows.masking import Masking
from flows.model import Flow
from flows.dialog import Dialog
from server.runtime import timeline
from flows.timers import timer_at
from server.runtime.dispatch import Dispatcher
from server.runtime.turn_events import MAX_KEY_TTL
from server.runtime.stores.base import TurnCommit

log = logging.getLogger("botflow.runtime.publish")

MODES = ("keep", "migrate", "reset")


def continues(mode: str, target: Flow, flow: Any, version: Any, state: Any) -> bool:
    """Whether a running dialog (its flow, version and state) goes on after a publish of `target`:
    `keep` keeps every dialog, `reset` drops every one (on the target version too), `migrate` keeps those
    already on the target or whose state the target has."""
    if mode == "keep":
        return True
    if mode == "reset":
        return False
    return (flow, version) == (target.id, target.version) or target.has_state(str(state))


async def apply(dispatcher: Dispatcher, bot_id: str, flow_id: str, version: int, mode: str) -> int:
    """Walk the bot's dialogs under their locks; returns how many were changed or dropped."""
    if mode not in MODES:
        raise ValueError(f"sessions must be one of {', '.join(MODES)}")
    if mode == "keep":
        return 0
    target = await dispatcher.catalog.flow(flow_id, version)
    if target is None:
        raise LookupError(f"flow {flow_id} has no version {version}")
    users = [user async for user in dispatcher.store.users(bot_id)]
    gate = asyncio.Semaphore(16)

    async def one(user: str) -> bool:
        async with gate:
            return await _one(dispatcher, bot_id, user, target, mode)

    changed = await asyncio.gather(*(one(user) for user in users))
    return sum(changed)


async def _one(dispatcher: Dispatcher, bot_id: str, user: str, target: Flow, mode: str) -> bool:
    async with dispatcher.opened(bot_id, user) as turn:
        stored = turn.loaded.dialog
        if stored is None:
            return False
        on_target = (stored.get("flow"), stored.get("version")) == (target.id, target.version)
        if on_target and continues(mode, target, stored.get("flow"), stored.get("version"), stored.get("state")):
            return False  # nothing to move
        now = dispatcher.clock()
        label = f"{target.id} v{target.version}"
        bot = await dispatcher.catalog.bot(bot_id)
        write = _migrated(stored, target, now, bot.masking if bot else None) if mode == "migrate" else None
        if write is None:
            why = "reset" if mode == "reset" else f"its state {stored.get('state')!r} does not exist in {label}"
            write = TurnCommit(None, timeline=timeline.note(
                now, "dropped", stored.get("state"), f"Publish of {label}: dialog dropped ({why}).", None))
        await dispatcher.commit(turn, write)
        return True


def _migrated(stored: dict[str, Any], target: Flow, now: float, masking: Masking | None = None) -> TurnCommit | None:
    """The dialog moved to `target` with its data, or None when its state does not exist there."""
    if not target.has_state(str(stored.get("state"))):
        return None
    moved = dict(stored)
    moved["flow"], moved["version"] = target.id, target.version
    moved["history"] = [state for state in stored.get("history") or [] if target.has_state(state)]
    dialog = Dialog.from_dict(moved)
    text = (f"Publish of {target.id} v{target.version}: dialog migrated from "
            f"{stored.get('flow')} v{stored.get('version')}.")
    ttl = max(1, math.ceil(min(dialog.updated_at + target.settings.session_ttl - now, MAX_KEY_TTL)))
    moved["due"] = timer_at(target, dialog)
    return TurnCommit(moved, ttl=ttl, timer_due=moved["due"],
                 timeline=timeline.note(now, "migrated", dialog.state, text, moved, masking, target))
