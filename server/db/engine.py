"""The async engine and session factory the whole app shares."""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from server.db.outage import DatabaseUnavailable
from server.metrics import DATABASE_ERRORS

log = logging.getLogger("botflow.db")


def is_sqlite(url: str) -> bool:
    """Whether the URL points at SQLite."""
    return url.startswith("sqlite")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers run beside one writer; busy_timeout makes concurrent writers wait instead of failing.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def make_engine(url: str, timeout: float = 10.0, **kwargs: Any) -> AsyncEngine:
    """An AsyncEngine whose connects and statements give up after `timeout` seconds.

    SQLite connections also get WAL, foreign keys and a busy timeout.
    """
    if is_sqlite(url):
        kwargs.setdefault("connect_args", {"timeout": timeout})
    else:
        kwargs.setdefault("pool_pre_ping", True)
        # Without these a black-holed server holds a request for asyncpg's 60 s connect timeout, or forever.
        kwargs.setdefault("connect_args", {"timeout": timeout, "command_timeout": timeout})
        kwargs.setdefault("pool_timeout", timeout)
    engine = create_async_engine(url, **kwargs)
    if is_sqlite(url):
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


# PostgreSQL's answers that waiting cannot change (SQLSTATE): the database, the role or its password.
INCURABLE = {"3D000": "does not exist", "28P01": "refused the password", "28000": "refused the user",
             "42501": "refused the user the right to connect"}


def refusal(exc: BaseException) -> str | None:
    """What the database said, when it is a refusal no retry can cure (missing database, wrong password)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "sqlstate", None) or getattr(current, "pgcode", None)
        if code in INCURABLE:
            return f"{INCURABLE[code]} ({str(current).strip().splitlines()[0][:200]})"
        if "unable to open database file" in str(current):
            return "cannot be opened (does its directory exist, and may this user write there?)"
        current = getattr(current, "orig", None) or current.__cause__
    return None


class Database:
    """Engine plus sessionmaker; one per app."""

    def __init__(self, url: str, timeout: float = 10.0, **engine_kwargs: Any) -> None:
        self.url = url
        self.timeout = timeout
        self.engine: AsyncEngine = make_engine(url, timeout, **engine_kwargs)
        self.sessionmaker: async_sessionmaker[AsyncSession] = async_sessionmaker(
            self.engine, expire_on_commit=False
        )

    @property
    def is_sqlite(self) -> bool:
        """Whether this is SQLite (single writer, no row locks)."""
        return is_sqlite(self.url)

    def session(self) -> AsyncSession:
        """A new session; use as `async with db.session() as s:`."""
        return self.sessionmaker()

    async def ping(self, timeout: float | None = None) -> bool:
        """Whether the database answers a trivial query within `timeout` seconds (default: the engine's)."""
        try:
            await asyncio.wait_for(self.check(), timeout or self.timeout)
            return True
        except Exception:  # any failure means "not ready"; the caller reports 503
            DATABASE_ERRORS.inc()
            return False

    async def check(self) -> None:
        """Run a trivial query; raises what the driver raises when the database does not answer."""
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def wait_until_reachable(self, seconds: float) -> None:
        """Retry `check` for up to `seconds`, one log line per failed attempt; DatabaseUnavailable after."""
        loop = asyncio.get_running_loop()
        deadline, attempt, pause = loop.time() + seconds, 0, 0.5
        while True:
            attempt += 1
            try:
                await asyncio.wait_for(self.check(), self.timeout)
                if attempt > 1:
                    log.info("database at %s answers after %d attempts", self.where, attempt)
                return
            except Exception as exc:  # every failure is retried until the deadline, then reported
                DATABASE_ERRORS.inc()
                incurable = refusal(exc)
                if incurable:  # no retry can create a database or fix a password
                    raise DatabaseUnavailable(f"the database at {self.where} {incurable}; check BOTFLOW_DATABASE_URL"
                                              ) from None
                reason = f"{type(exc).__name__}: {exc}".rstrip(": ")
                left = deadline - loop.time()
                if left <= 0:
                    raise DatabaseUnavailable(
                        f"the database at {self.where} did not answer within {seconds:g} s ({reason}); "
                        "check BOTFLOW_DATABASE_URL and that the server runs, or raise BOTFLOW_START_TIMEOUT"
                    ) from None
                log.warning("waiting for the database at %s (attempt %d, %s); retrying in %.1f s",
                            self.where, attempt, reason, min(pause, left))
                await asyncio.sleep(min(pause, left))
                pause = min(pause * 2, 5.0)

    @property
    def where(self) -> str:
        """Host, port and database name of the URL, never its password."""
        url = self.engine.url
        if is_sqlite(self.url):
            return url.database or ":memory:"
        return f"{url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()
