"""The async engine and session factory the whole app shares."""
from __future__ import annotations

from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine


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


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """An AsyncEngine; SQLite connections get WAL, foreign keys and a busy timeout."""
    if is_sqlite(url):
        kwargs.setdefault("connect_args", {"timeout": 10})
    else:
        kwargs.setdefault("pool_pre_ping", True)
    engine = create_async_engine(url, **kwargs)
    if is_sqlite(url):
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


class Database:
    """Engine plus sessionmaker; one per app."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine: AsyncEngine = make_engine(url, **engine_kwargs)
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

    async def ping(self) -> bool:
        """Whether the database answers a trivial query."""
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            return True
        except Exception:  # any failure means "not ready"; the caller reports 503
            return False

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()
