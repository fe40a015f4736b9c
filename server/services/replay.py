"""Replay production against a draft or a version: recorded updates read from the runtime's timelines.

`recorded_dialogs` is the one place that knows how timelines are encoded; re-point it when the
runtime changes its timeline format.
"""
from __future__ import annotations

import asyncio
import heapq
import json
import re
from typing import Any, AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession

from flows.testing.replay import Recording, Recorded, Report
from server.errors import AppError, NotFound, Unprocessable
from server.services.bots import get_row as get_bot_row
from server.services.sandbox import source_flow
from server.runtime.stores.ports import Timelines

BATCH = 500
MASKED = "its first answer was masked by the bot's privacy settings, so there is nothing to replay"
CAPPED = "only the end of this dialog is kept (200 records per user), so it cannot be replayed from its start"
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
                     until: float | None = None) -> Recording:
    """A user's timeline records as replayable turns, from the first turn that began without a dialog."""
    turns: list[Recorded] = []
    unreplayable = None
    for rec in records:
        entries = rec.get("e") or []
        if len(entries) < 2:  # a note (dropped, migrated), not a turn
            if entries and entries[0][0] == "dropped":
                turns = []  # the dialog was reset by a publish: a replay starts after it
            continue
        if (since is not None and rec["t"] < since) or (until is not None and rec["t"] > until):
            continue
        if rec.get("m"):
            if not turns:
                unreplayable = MASKED
            break  # the user's answer was masked (bot settings): the dialog is replayed up to it
        kind, before, _, text = entries[0]
        update = _update(kind, text)
        if update is None:
            continue
        if not turns and before is not None:
            unreplayable = CAPPED
            continue  # the timeline was capped mid-dialog: wait for a fresh start
        outcome = entries[1]
        snapshot = rec.get("s")
        state = snapshot.get("state") if isinstance(snapshot, dict) else None
        replies = [e[3] for e in entries[2:] if e[0] == "reply"]
        turns.append(Recorded(rec["t"], update, before, state, outcome[2], replies))
    return Recording(user, turns, None if turns else unreplayable)


async def timelines(store: Timelines, bot: str, users: list[str] | None) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """The named users' timelines, or every user's of the bot (ended dialogs included) in one pass."""
    if users is None:
        async for line in store.bot_timelines(bot):
            yield line
        return
    for user in users:
        yield user, await store.timeline(bot, user)


async def _replay_batch(report: Report, dialogs: list[Recording]) -> None:
    """Engine work off the event loop, a batch at a time, so other requests keep being answered."""
    def add_all() -> None:
        for dialog in dialogs:
            report.add(dialog)

    if dialogs:
        await asyncio.to_thread(add_all)


async def replay_bot(session: AsyncSession, store: Timelines | None, bot_id: str, flow_id: str | None, source: Any,
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
    report = Report(flow)
    batch: list[Recording] = []
    recent: list[tuple[float, int, Recording]] = []  # with `last`: a heap of the N dialogs active most recently
    order = 0
    async for user, records in timelines(store, bot_id, users):
        order += 1
        dialog = recorded_dialogs(user, records, since, until)
        if not dialog.turns:
            report.add(dialog)  # listed with its reason when it cannot be replayed
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
