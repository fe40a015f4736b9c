"""The Redis store's live-dialog counts and listing: SCAN with a cursor (never KEYS), MGET per batch."""
from __future__ import annotations

import base64
import re
from collections import Counter
from typing import Any

import msgspec

from server.runtime.stores import dialog_codec
from server.runtime.stores.ports import Listing
from server.runtime.stores.redis_conn import RedisConn
from server.runtime.stores.listing import (
    BAD_CURSOR, CURSOR_MAX, BadSearch, CountKey, DialogLine, DialogPage, Search, check, key_of, line, wanted,
)

SCAN_COUNT = 1000  # keys Redis looks at per SCAN call
SCAN_STEPS = 100  # SCAN calls one page makes at most (~100k keys, tens of ms), so a rare match never walks everything
HELD_MAX = 40  # users a cursor may carry (the rest of one SCAN step of about a page: a few at most)
_CURSOR = re.compile(r"(\d{1,20})(?:\.([A-Za-z0-9_-]{1,%d}={0,2}))?" % (CURSOR_MAX - 24))


def _glob(text: str) -> str:
    """`text` matched literally in a SCAN pattern."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def _cursor(scan: int, held: list[str]) -> str:
    """A page's cursor: Redis's SCAN cursor, then the users of the last step the page had no room for."""
    if not held:
        return str(scan)
    return f"{scan}.{base64.urlsafe_b64encode(msgspec.json.encode(held)).decode()}"


def _parse(cursor: str) -> tuple[int, list[str]]:
    """(SCAN cursor, users held over) from `_cursor` output; BadSearch for anything else."""
    parsed = _CURSOR.fullmatch(cursor)
    if parsed is None:
        raise BadSearch(BAD_CURSOR)
    held: Any = []
    if parsed[2]:
        try:
            held = msgspec.json.decode(base64.urlsafe_b64decode(parsed[2]))
        except (ValueError, msgspec.DecodeError):
            raise BadSearch(BAD_CURSOR) from None
        if not (isinstance(held, list) and 0 < len(held) <= HELD_MAX and all(isinstance(u, str) for u in held)):
            raise BadSearch(BAD_CURSOR)
    return int(parsed[1]), held


class RedisListing(Listing):
    """Running dialogs found by SCAN over the dialog keys. A cursor is `<SCAN cursor>`, or `<SCAN cursor>.<users>`
    when a page ended inside a SCAN step that returned more than it had room for (a bucket of keys is
    never split): the users it left out, shown first on the next page."""

    name = "redis"

    def __init__(self, conn: RedisConn) -> None:
        self.conn = conn

    def _pattern(self, bot: str, prefix: str = "") -> str:
        return f"{_glob(self.conn.keys.of(bot).base)}{{{_glob(bot)}:{_glob(prefix)}*}}:d"

    async def _batch(self, cursor: int, pattern: str, bot: str,
                     count: int = SCAN_COUNT) -> tuple[int, list[tuple[str, dict[str, Any]]]]:
        """One SCAN step: the next cursor and the (user, dialog) pairs found, in SCAN's order. In a cluster
        the bot's keys share one slot: SCAN asks the node holding it."""
        after, keys = await self.conn.call_at(self.conn.keys.user(bot, ""), "SCAN", cursor, "MATCH", pattern,
                                              "COUNT", count)
        return int(after), await self._read(keys)

    async def _read(self, keys: list[bytes]) -> list[tuple[str, dict[str, Any]]]:
        """(user, dialog) of those of the dialog keys still there."""
        found = []
        if keys:
            for key, raw in zip(keys, await self.conn.call("MGET", *keys)):
                if raw is not None:
                    found.append((self.conn.keys.parse_dialog(key.decode())[1], dialog_codec.decode(raw)))
        return found

    async def dialog_counts(self, bot: str) -> dict[CountKey, int]:
        counts: Counter[CountKey] = Counter()
        cursor, pattern = 0, self._pattern(bot)
        while True:
            cursor, found = await self._batch(cursor, pattern, bot)
            counts.update(key_of(dialog) for _, dialog in found)
            if cursor == 0:
                return dict(counts)

    async def dialog_page(self, bot: str, search: Search) -> DialogPage:
        check(search)
        if search.exact:
            raw = await self.conn.call("GET", self.conn.keys.user(bot, search.user) + "d")
            dialog = dialog_codec.decode(raw) if raw is not None else None
            if dialog is None or not wanted(search, search.user, dialog):
                return DialogPage([])
            return DialogPage([line(search.user, dialog)])
        # Pages end where a SCAN step does, so the next one goes on from a cursor of Redis's own: SCAN returns
        # every key there the whole walk whatever Redis does to its table meanwhile (a dialog may show twice
        # if the table shrinks). Walking one step again would not do: once Redis resizes or rehashes its
        # table, a step from the same cursor returns other keys or the same ones in another order.
        cursor, held = _parse(search.cursor) if search.cursor else (0, [])
        page: list[DialogLine] = []
        if held:  # read again: they may have ended or changed since
            keys = [(self.conn.keys.user(bot, user) + "d").encode() for user in held]
            lines = [line(user, s) for user, s in await self._read(keys) if wanted(search, user, s)]
            if len(lines) > search.limit:
                return DialogPage(lines[:search.limit], _cursor(cursor, [x.user for x in lines[search.limit:]]))
            page = lines
            if cursor == 0:  # the walk had ended with these
                return DialogPage(page)
        pattern, count = self._pattern(bot, search.user), SCAN_COUNT
        for _ in range(SCAN_STEPS):
            need = search.limit - len(page)
            if need == 0:
                break
            start = cursor
            cursor, found = await self._batch(start, pattern, bot, count)
            lines = [line(user, s) for user, s in found if wanted(search, user, s)]
            if len(lines) > need and count > need:
                # more than the page has room for: that step again in one of about `need` keys
                cursor, count = start, need
                continue
            count = SCAN_COUNT
            if len(lines) > need and page:  # a bucket holds more: the step starts the next page, whole
                return DialogPage(page, _cursor(start, []))
            if len(lines) > need:  # more than a page in one step: the rest go along in the cursor
                return DialogPage(lines[:need], _cursor(cursor, [x.user for x in lines[need:]]))
            page += lines
            if cursor == 0:
                return DialogPage(page)
        return DialogPage(page, _cursor(cursor, []))
