"""The login limit: wrong passwords per username and per client, counted in the database for every replica."""
from __future__ import annotations

import time

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import LoginFailureRow
from server.errors import AppError
from server.services.common import USERNAME


LIMIT = 10
WINDOW = 15 * 60


class TooManyAttempts(AppError):
    """A 429 that says how long to wait."""

    def __init__(self, retry_after: int) -> None:
        minutes = max(1, -(-retry_after // 60))
        super().__init__(429, "too_many_attempts",
                         f"Too many wrong passwords; try again in {minutes} minute{'s' if minutes != 1 else ''}.",
                         headers={"Retry-After": str(retry_after)})
        self.retry_after = retry_after


def keys(username: str, client: str | None) -> list[str]:
    """The counters one attempt touches: the username (any case) and the client address."""
    # Names no account can have (a NUL, which PostgreSQL cannot store, or odd characters) share one counter.
    name = username.lower() if USERNAME.fullmatch(username) else "(not a username)"
    found = [f"user:{name}"]
    if client:
        found.append(f"client:{client[:150]}")
    return found


async def check(session: AsyncSession, counters: list[str], now: float | None = None) -> None:
    """Raise TooManyAttempts when any counter has LIMIT failures within the last WINDOW seconds."""
    now = time.time() if now is None else now
    rows = (await session.execute(
        select(LoginFailureRow.key, func.count(), func.min(LoginFailureRow.at))
        .where(LoginFailureRow.key.in_(counters), LoginFailureRow.at > now - WINDOW)
        .group_by(LoginFailureRow.key)
    )).all()
    for _, count, oldest in rows:
        if count >= LIMIT:
            raise TooManyAttempts(max(1, int(oldest + WINDOW - now) + 1))


async def record_failure(session: AsyncSession, counters: list[str], now: float | None = None) -> None:
    """Count one wrong password on every counter, forgetting all failures older than the window."""
    now = time.time() if now is None else now
    # Every expired row goes, not only these counters', so guessing many names cannot grow the table.
    await session.execute(delete(LoginFailureRow).where(LoginFailureRow.at <= now - WINDOW))
    session.add_all(LoginFailureRow(key=key, at=now) for key in counters)
    await session.commit()


async def forget(session: AsyncSession, counter: str) -> None:
    """A successful login clears its username's counter (the client's stays, so guessing many names still counts)."""
    await session.execute(delete(LoginFailureRow).where(LoginFailureRow.key == counter))
