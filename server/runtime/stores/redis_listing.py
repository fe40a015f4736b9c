"""The Redis store's live-dialog counts and listing: SCAN with a cursor (never KEYS), MGET per batch."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Callable

from server.runtime.keys import Keys
from server.runtime.stores import dialog_codec
from server.runtime.stores.listing import (
    BadSearch, CountKey, DialogLine, DialogPage, Search, check, key_of, line, wanted,
)

SCAN_COUNT = 1000  # keys Redis looks at per SCAN call
SCAN_STEPS = 100  # SCAN calls one page makes at most (~100k keys, tens of ms), so a rare match never walks everything
_CURSOR = re.compile(r"(\d{1,20})\.(\d{1,6})")


def _glob(text: str) -> str:
    """`text` matched literally in a SCAN pattern."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


class RedisListing:
    """Mixed into RedisStore (its keys and `_call`). A cursor is `<SCAN cursor>.<matches to skip>`: a page
    that ends inside one SCAN batch resumes by scanning that batch again and skipping what it showed."""

    keys: Keys
    _call: Callable[..., Any]

    def _pattern(self, bot: str, prefix: str = "") -> str:
        return f"{_glob(self.keys.base)}{{{_glob(bot)}:{_glob(prefix)}*}}:d"

    async def _batch(self, cursor: int, pattern: str) -> tuple[int, list[tuple[str, dict[str, Any]]]]:
        """One SCAN step: the next cursor and the (user, dialog) pairs found, in SCAN's order."""
        after, keys = await self._call("SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT)
        found = []
        if keys:
            for key, raw in zip(keys, await self._call("MGET", *keys)):
                if raw is not None:
                    found.append((self.keys.parse_dialog(key.decode())[1], dialog_codec.decode(raw)))
        return int(after), found

    async def dialog_counts(self, bot: str) -> dict[CountKey, int]:
        counts: Counter[CountKey] = Counter()
        cursor, pattern = 0, self._pattern(bot)
        while True:
            cursor, found = await self._batch(cursor, pattern)
            counts.update(key_of(session) for _, session in found)
            if cursor == 0:
                return dict(counts)

    async def dialog_page(self, bot: str, search: Search) -> DialogPage:
        check(search)
        if search.exact:
            raw = await self._call("GET", self.keys.user(bot, search.user) + "d")
            session = dialog_codec.decode(raw) if raw is not None else None
            hit = session is not None and wanted(search, search.user, session)
            return DialogPage([line(search.user, session)] if hit else [])
        cursor, skip = 0, 0
        if search.cursor:
            parsed = _CURSOR.fullmatch(search.cursor)
            if parsed is None:
                raise BadSearch("cursor is not one this listing handed out; start again without it.")
            cursor, skip = int(parsed[1]), int(parsed[2])
        page: list[DialogLine] = []
        pattern = self._pattern(bot, search.user)
        for _ in range(SCAN_STEPS):
            start = cursor
            cursor, found = await self._batch(start, pattern)
            lines = [line(user, s) for user, s in found if wanted(search, user, s)][skip:]
            need = search.limit - len(page)
            if len(lines) > need:
                page += lines[:need]
                return DialogPage(page, f"{start}.{skip + need}")
            page += lines
            skip = 0
            if cursor == 0:
                return DialogPage(page)
            if len(page) == search.limit:
                break
        return DialogPage(page, f"{cursor}.0")
