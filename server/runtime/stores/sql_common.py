"""What the SQLite and PostgreSQL stores share: the tables, JSON text, key shapes and failure mapping."""
from __future__ import annotations

import functools
from typing import Any, Callable, Coroutine, ParamSpec, TypeVar

import msgspec
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from server.db.base import table_of
from server.db.funnel import FunnelDeltaRow
from server.db.runtime_tables import ActionRow, DedupeRow, DialogRow, OutboxQueueRow, OutboxRow, TimelineRow
from server.runtime.stores.base import Next, StoreUnavailable, TurnCommit, held_until

R = TypeVar("R")
P = ParamSpec("P")
# As Tables (delete() and update() take only those); one letter each, `O` the outbox.
FD, D, T, U, O, Q, A = (table_of(row) for row in (  # noqa: E741
    FunnelDeltaRow, DialogRow, TimelineRow, DedupeRow, OutboxRow, OutboxQueueRow, ActionRow))

encode = msgspec.json.encode
decode = msgspec.json.decode


def as_text(value: Any) -> str:
    """A value as the JSON text the tables keep."""
    return encode(value).decode()


def guarded(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """Database failures leave the store as StoreUnavailable, the one error its callers handle."""
    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except DBAPIError as exc:
            if isinstance(exc, (OperationalError, InterfaceError)) or exc.connection_invalidated:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
            raise
        except (OSError, TimeoutError) as exc:
            raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
    return call


def mark(user: str, dedupe: str) -> str:
    """The duplicate mark's key: per user, as `bot_started` marks are only unique within one user."""
    return f"{user}:{dedupe}"


def of(item: str, bot: str, user: str) -> bool:
    """Whether a stored webhook action belongs to this user's dialog."""
    found = decode(item)
    return (found.get("bot"), found.get("user")) == (bot, user)


def where(table: Any, bot: str, user: str) -> Any:
    """The rows of one user's dialog in `table`."""
    return (table.c.bot_id == bot) & (table.c.user_id == user)


def claimed(write: TurnCommit, asked: float) -> Next:
    """The write's first send, now the committer's to make (its claim proved at `asked`)."""
    return Next(write.outbox[0], more=tuple(Next(i) for i in write.outbox[1:]),
                held=held_until(asked, write.outbox_lease))
