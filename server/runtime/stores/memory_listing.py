"""The in-process store's live-dialog counts and listing (ordered by user id, the cursor is the last id)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from server.runtime.stores.listing import CountKey, DialogPage, Search, check, key_of, line, wanted


class MemoryListing:
    """Mixed into MemoryStore: reads its `_dialogs` through `_dialog` (which drops expired ones)."""

    _dialogs: dict[tuple[str, str], Any]
    _dialog: Callable[[tuple[str, str]], dict[str, Any] | None]

    def _running(self, bot: str) -> list[tuple[str, dict[str, Any]]]:
        found = []
        for key in list(self._dialogs):
            if key[0] == bot:
                session = self._dialog(key)
                if session is not None:
                    found.append((key[1], session))
        return found

    async def dialog_counts(self, bot: str) -> dict[CountKey, int]:
        return dict(Counter(key_of(session) for _, session in self._running(bot)))

    async def dialog_page(self, bot: str, search: Search) -> DialogPage:
        check(search)
        after = search.cursor or ""
        rows = sorted((user, s) for user, s in self._running(bot) if user > after and wanted(search, user, s))
        page = [line(user, s) for user, s in rows[:search.limit]]
        more = len(rows) > search.limit
        return DialogPage(page, page[-1].user if more else None)
