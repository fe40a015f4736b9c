"""Helpers of the dialog-store suite (tests/integration/stores): a settable clock and short turns."""
from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from server.runtime.stores import BUSY, OK, DialogStore, TurnCommit, new_token
from server.runtime.funnel_counts import Counts, group
from server.runtime.stores.listing import Search


class Clock:
    """A settable clock so expiry and timers are tested without waiting."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def begin_waiting(store: DialogStore, bot: str, user: str, token: str, dedupe: str | None = None):
    """begin(), retrying while another holder has the lock (PostgreSQL blocks instead)."""
    while True:
        loaded = await store.begin(bot, user, token, dedupe)
        if loaded.status != BUSY:
            return loaded
        await asyncio.sleep(0.01)


async def save(store: DialogStore, bot: str, user: str, write: TurnCommit) -> None:
    token = new_token()
    loaded = await begin_waiting(store, bot, user, token)
    assert loaded.status == OK
    await store.commit(bot, user, token, write, loaded)


def dialog(state: str, **data) -> dict:
    return {"flow": "f", "version": 1, "state": state, "data": data, "history": []}


def counted(now: float, *fields: str) -> Counts:
    return Counts([(group("f", 1, now), f) for f in fields])


async def expire(store: DialogStore) -> float:
    """Let a ttl=1 dialog run out (Redis by its own clock); the time to sweep at."""
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]
        await asyncio.sleep(1.3)
    store.test_clock.now += 1.5  # type: ignore[attr-defined]
    return store.test_clock.now  # type: ignore[attr-defined]


def hours(now: float) -> range:
    return range(int(now // 3600) - 1, int(now // 3600) + 2)


async def all_pages(store: DialogStore, bot: str, search: Search, most: int = 50) -> tuple[list[str], int]:
    """The users a listing shows page after page, and how many pages it took (failing past `most`)."""
    seen, pages = [], 0
    while True:
        page = await store.dialog_page(bot, search)
        assert len(page.dialogs) <= search.limit
        seen += [d.user for d in page.dialogs]
        pages += 1
        assert pages <= most, "the listing never ended"
        if page.next is None:
            return seen, pages
        search = replace(search, cursor=page.next)


async def fill(store: DialogStore, bot: str, user: str, n: int) -> None:
    """A user with everything a store keeps: dialog, timer, marks, timeline (moved and not), sends, an action."""
    now = store.test_clock.now  # type: ignore[attr-defined]
    for k in range(n):
        await save(store, bot, user, TurnCommit(
            dialog("ask", phone="+79161234567"), dedupe=f"m:{user}:{k}", timeline={"t": now, "e": [["message", None, None, f"hi {k}"]], "s": None},
            timer_due=now + 60, outbox=[{"id": f"{user}-{k}", "op": "send", "chat_id": 1, "text": "x"}],
            actions=[{"id": f"a-{bot}-{user}-{k}", "bot": bot, "user": user, "url": "http://x", "data": {}}]))
        if k == 0:
            await store.move_timeline()  # on Redis: the first record in the database, the later ones in the stream
