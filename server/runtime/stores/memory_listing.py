"""The in-process store's live-dialog counts and listing (ordered by user id, the cursor is the last id)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from server.runtime.stores.ports import Listing
from server.runtime.stores.listing import CountKey, DialogPage, Search, check, key_of, line, wanted


class MemoryListing(Listing):
    """The in-process store's listing part: reads the running dialogs through `running(bot)`."""

    name = "memory"

    def __init__(self, running: Callable[[str], list[tuple[str, dict[str, Any]]]]) -> None:
        self._running = running

    async def dialog_counts(self, bot: str) -> dict[CountKey, int]:
        return dict(Counter(key_of(dialog) for _, dialog in self._running(bot)))

    async def dialog_page(self, bot: str, search: Search) -> DialogPage:
        check(search)
        after = search.cursor or ""
        rows = sorted((user, s) for user, s in self._running(bot) if user > after and wanted(search, user, s))
        page = [line(user, s) for user, s in rows[:search.limit]]
        more = len(rows) > search.limit
        return DialogPage(page, page[-1].user if more else None)
