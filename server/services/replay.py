"""Replay production against a draft or a version: recorded updates read from the runtime's timelines.

`recorded_dialogs` is the one place that knows how timelines are encoded; re-point it when the
runtime changes its timeline format.
"""
from __future__ import annotations

import asyncio
import heapq
import json
import re
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from flows.testing.replay import Dialog, Recorded, Report
from server.errors import AppError, NotFound, Unprocessable
from server.services.bots import get_row as get_bot_row
from server.services.sandbox import source_flow

MAX_USERS = 20_000
BATCH = 500
_ATTACHMENT = re.compile(r"\s*\[([a-z_]+)\]$")


def _message(text: str) -> dict[str, Any]:
    """A recorded message back as an update: trailing "[kind]" words are its attachments' kinds."""
    kinds: list[str] = []
    while True:
        m = _ATTACHMENT.search(text)
        if m is None:
            break
        kinds.insert(0, m.group(1))
        text = text[:m.start()]
    if not kinds:
        return {"text": text}
    update: dict[str, Any] = {"attachment": {"type": kinds[0], "payload": {}}}
    if text:
        update["text"] = text
    return update


def _update(kind: str, text: str) -> dict[str, Any] | None:
    if kind == "message":
        return _message(text or "")
    if kind == "button":
        return {"payload": text or ""}
    if kind == "bot_started":
        return {"bot_started": text or None}
    if kind == "timer":
        return {"idle": 0}
    if kind == "event":
        name, _, payload = (text or "").partition(" ")
        try:
            body = json.loads(payload) if payload else {}
        except ValueError:
            body = {}
        return {"event": name, "payload": body if isinstance(body, dict) else {}}
    return None


def recorded_dialogs(user: str, records: list[dict[str, Any]], since: float | None = None,
                     until: float | None = None) -> Dialog:
    """A user's timeline records as replayable turns, from the first turn that began without a dialog."""
    turns: list[Recorded] = []
    for rec in records:
        entries = rec.get("e") or []
        if len(entries) < 2:  # a note (dropped, migrated), not a turn
            if entries and entries[0][0] == "dropped":
                turns = []  # the dialog was reset by a publish: a replay starts after it
            continue
        if (since is not None and rec["t"] < since) or (until is not None and rec["t"] > until):
            continue
        if rec.get("m"):
            break  # the user's answer was masked (bot settings): the dialog is replayed up to it
        kind, before, _, text = entries[0]
        update = _update(kind, text)
        if update is None:
            continue
        if not turns and before is not None:
            continue  # the timeline was capped mid-dialog: wait for a fresh start
        outcome = entries[1]
        snapshot = rec.get("s")
        state = snapshot.get("state") if isinstance(snapshot, dict) else None
        replies = [e[3] for e in entries[2:] if e[0] == "reply"]
        turns.append(Recorded(rec["t"], update, before, state, outcome[2], replies))
    return Dialog(user, turns)


async def timeline_users(store: Any, bot: str) -> list[str]:
    """Users of a bot that have a timeline, ended dialogs included."""
    return await store.timeline_users(bot, MAX_USERS)


async def _replay_batch(report: Report, dialogs: list[Dialog]) -> None:
    """Engine work off the event loop, a batch at a time, so other requests keep being answered."""
    if dialogs:
        await asyncio.to_thread(lambda: [report.add(d) for d in dialogs])


async def replay_bot(session: AsyncSession, store: Any, bot_id: str, flow_id: str | None, source: Any,
                     since: float | None, until: float | None, last: int | None,
                     users: list[str] | None) -> dict[str, Any]:
    """Replay the bot's recorded dialogs (a period, the last N, or the users named) on the draft or a version."""
    bot = await get_bot_row(session, bot_id)
    flow_id = flow_id or bot.flow_id
    if flow_id is None:
        raise Unprocessable(f"Bot '{bot_id}' serves no flow yet; name the flow to replay against.",
                            details=[{"path": "flow", "message": "required while the bot serves nothing"}])
    flow = await source_flow(session, flow_id, source)
    if store is None:
        raise AppError(503, "unavailable", "The runtime is not running here, so there are no recorded dialogs.")
    names = users if users is not None else await timeline_users(store, bot_id)
    report = Report(flow)
    batch: list[Dialog] = []
    recent: list[tuple[float, int, Dialog]] = []  # with `last`: a heap of the N dialogs active most recently
    for order, user in enumerate(names):
        dialog = recorded_dialogs(user, await store.timeline(bot_id, user), since, until)
        if not dialog.turns:
            continue
        if last is None:
            batch.append(dialog)
            if len(batch) >= BATCH:
                await _replay_batch(report, batch)
                batch = []
        elif len(recent) < last:
            heapq.heappush(recent, (dialog.turns[-1].t, order, dialog))
        else:
            heapq.heappushpop(recent, (dialog.turns[-1].t, order, dialog))
    batch += [dialog for _, _, dialog in sorted(recent, reverse=True)]
    await _replay_batch(report, batch)
    if report.count == 0 and users is not None:
        raise NotFound("None of the users named has recorded dialogs with this bot in that period.")
    result = report.result()
    return {"bot": bot_id, "flow": flow_id, "source": "draft" if source in (None, "draft") else source, **result}
