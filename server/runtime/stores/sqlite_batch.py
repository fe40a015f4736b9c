"""The SQL store on SQLite: many turns' writes in one transaction, in one hop to a writer thread; their
reads likewise, many to a hop, on a reader thread of their own.

SQLite takes one writer at a time and syncs the disk at each commit, and every statement through the async
driver is a round trip to its thread: a turn of eight statements waited out eight hops and a sync, one
turn after another. Writes that arrive while a batch commits go together in the next one; each waiter
gets its own answer once the batch is durable. A batch that fails fails each of its writes (nothing of
any of them was saved). Reads (a turn's begin) went through SQLAlchemy's pool and aiosqlite: a checkout,
three hops to the connection's thread and a rollback each, and at 64 turns in flight the pool's overflow
opened and closed a connection (and its thread) per read; now a batch of reads is one hop and one snapshot
(WAL: they never wait for the writer), taken after every write already answered was committed.
"""
from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from server.runtime.stores.base import TIMELINE_CAP, StoreUnavailable

Work = Callable[[sqlite3.Cursor], Any]

FUNNEL_ADD = ("INSERT INTO funnel_counters (bot_id, flow_id, version, hour, field, value) VALUES (?, ?, ?, ?, ?, ?) "
              "ON CONFLICT (bot_id, flow_id, version, hour, field) DO UPDATE SET value = value + excluded.value")
DIALOG_SAVE = ("INSERT INTO runtime_dialogs (bot_id, user_id, session, expires_at, due) VALUES (?, ?, ?, ?, ?) "
               "ON CONFLICT (bot_id, user_id) DO UPDATE SET session = excluded.session, "
               "expires_at = excluded.expires_at, due = excluded.due")
DIALOG_DROP = "DELETE FROM runtime_dialogs WHERE bot_id = ? AND user_id = ?"
DIALOG_TEXT = "SELECT session FROM runtime_dialogs WHERE bot_id = ? AND user_id = ?"
TIMELINE_ADD = "INSERT INTO runtime_timeline (bot_id, user_id, at, record) VALUES (?, ?, ?, ?)"
# The user's newest TIMELINE_CAP records stay (by the (bot, user, id) index: no count of all of them).
TIMELINE_CAP_USER = (f"DELETE FROM runtime_timeline WHERE bot_id = ?1 AND user_id = ?2 AND id <= (SELECT id FROM "
                     f"runtime_timeline WHERE bot_id = ?1 AND user_id = ?2 ORDER BY id DESC LIMIT 1 OFFSET {TIMELINE_CAP})")
MARK = ("INSERT INTO runtime_dedupe (bot_id, key, expires_at) VALUES (?, ?, ?) "
        "ON CONFLICT (bot_id, key) DO UPDATE SET expires_at = excluded.expires_at")
OUTBOX_ADD = "INSERT INTO runtime_outbox (bot_id, user_id, item_id, item) VALUES (?, ?, ?, ?)"
QUEUE_CLAIM = ("INSERT INTO runtime_outbox_queue (bot_id, user_id, owner, next_at) VALUES (?, ?, ?, ?) "
               "ON CONFLICT DO NOTHING")
ACTION_ADD = "INSERT INTO runtime_actions (id, item, next_at) VALUES (?, ?, ?)"
QUEUE_RENEW = "UPDATE runtime_outbox_queue SET next_at = ? WHERE bot_id = ? AND user_id = ? AND owner = ?"
OUTBOX_HEAD = "SELECT id, item_id, item FROM runtime_outbox WHERE bot_id = ? AND user_id = ? ORDER BY id LIMIT 1"
OUTBOX_DROP = "DELETE FROM runtime_outbox WHERE id = ?"
QUEUE_END = "DELETE FROM runtime_outbox_queue WHERE bot_id = ? AND user_id = ?"
# A turn's read, one statement: the duplicate mark (when there is one) and the dialog.
LOAD = ("SELECT (SELECT 1 FROM runtime_dedupe WHERE ?3 IS NOT NULL AND bot_id = ?1 AND key = ?3 "
        "AND expires_at > ?4), d.session, d.expires_at FROM (SELECT 1) LEFT JOIN runtime_dialogs AS d "
        "ON d.bot_id = ?1 AND d.user_id = ?2")


class SqliteBatch:
    """One connection and thread for a SQLite file; `run` puts a piece of work in the next batch.

    `writes`: the writer's (BEGIN IMMEDIATE, the database's one write lock); else a reader's (a deferred
    BEGIN: one snapshot for the batch, and the connection refuses writes).
    """

    def __init__(self, path: str, timeout: float = 10.0, *, writes: bool = True) -> None:
        self.path = path
        self.timeout = timeout
        self.writes = writes
        self._conn: sqlite3.Connection | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writer")
        self._waiting: list[tuple[Work, asyncio.Future[Any]]] = []
        self._flushing: asyncio.Task[None] | None = None

    async def run(self, work: Work, guard: asyncio.Lock | None = None) -> Any:
        """`work(cursor)` in the next batch transaction (taken under `guard`); its answer once committed."""
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((work, done))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush(guard))
        return await asyncio.shield(done)

    async def _flush(self, guard: asyncio.Lock | None) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                if guard is None:
                    answers = await loop.run_in_executor(self._thread, self._commit, [w for w, _ in batch])
                else:
                    async with guard:
                        answers = await loop.run_in_executor(self._thread, self._commit, [w for w, _ in batch])
            except Exception as exc:  # noqa: BLE001 - handed to every waiter of the batch
                if isinstance(exc, (sqlite3.OperationalError, OSError)):
                    exc = StoreUnavailable(f"the database did not answer: {exc}")
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            for (_, done), answer in zip(batch, answers):
                if not done.done():
                    done.set_result(answer)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
            if self.writes:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA foreign_keys=ON")
            else:
                conn.execute("PRAGMA query_only=ON")
            self._conn = conn
        return self._conn

    def _commit(self, works: list[Work]) -> list[Any]:
        cursor = self._connection().cursor()
        cursor.execute("BEGIN IMMEDIATE" if self.writes else "BEGIN")
        try:
            answers = [work(cursor) for work in works]
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        cursor.execute("COMMIT")
        return answers

    async def close(self) -> None:
        if self._flushing is not None:
            await asyncio.gather(self._flushing, return_exceptions=True)
        conn, self._conn = self._conn, None
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(self._thread, conn.close)
        self._thread.shutdown(wait=False)
