"""Before `botflow serve` listens: wait for the database (and Redis) and migrate, stoppable at any moment.

Done before uvicorn starts, so a database that never answers ends in one line naming what to check (not
the server framework's traceback of its failed start-up), and Ctrl+C or SIGTERM end the wait at once.
"""
from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from server.db.engine import Database
from server.db.outage import DatabaseUnavailable
from server.dependencies import DependencyUnavailable, wait_for_dependencies
from server.settings import Settings


async def in_daemon_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` in a thread the process does not wait for, so a stop signal never waits on it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def fail(error: BaseException) -> None:
        if not done.done():
            done.set_exception(error)

    def succeed(result: Any) -> None:
        if not done.done():
            done.set_result(result)

    def run() -> None:
        try:
            result: Any = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine as it is
            loop.call_soon_threadsafe(fail, exc)
        else:
            loop.call_soon_threadsafe(succeed, result)

    threading.Thread(target=run, name="botflow-migrate", daemon=True).start()
    return await done


async def _prepare(settings: Settings) -> None:
    from server.db.migrate import upgrade_blocking

    db = Database(settings.database_url, settings.db_timeout)
    try:
        await wait_for_dependencies(settings, db)
        await in_daemon_thread(upgrade_blocking, settings.database_url)
    finally:
        try:
            await asyncio.wait_for(asyncio.shield(db.dispose()), 1)
        except (TimeoutError, asyncio.CancelledError):
            pass  # the process is leaving; the sockets close with it


async def _stoppable(settings: Settings) -> str | None:
    """Prepare; the name of the signal that stopped it, or None when it finished."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(_prepare(settings))
    stopped: list[str] = []

    def stop(sig: signal.Signals) -> None:
        stopped.append(sig.name)
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop, sig)
    try:
        await task
    except asyncio.CancelledError:
        if not stopped:
            raise
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return stopped[0] if stopped else None


def prepare_or_exit_status(settings: Settings) -> int | None:
    """None when the server may start; else the exit status, after one line on stderr saying why."""
    try:
        stopped = asyncio.run(_stoppable(settings))
    except (DatabaseUnavailable, DependencyUnavailable) as exc:
        print(f"botflow: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a failed migration: one line, not a traceback
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        print(f"botflow: the database could not be migrated ({first}); check BOTFLOW_DATABASE_URL", file=sys.stderr)
        return 1
    if stopped:
        print(f"botflow: stopped by {stopped} before the server started", file=sys.stderr)
        return 0
    return None
