"""Start-up waits for the services a replica needs, with one clear log line per failed attempt."""
from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

from server.runtime.stores.sentinel import redis_py

from server.db.engine import Database
from server.settings import Settings

log = logging.getLogger("botflow.startup")


class DependencyUnavailable(Exception):
    """A service did not answer within BOTFLOW_START_TIMEOUT; the message names it and what to check."""


def redis_where(url: str) -> str:
    """Host and port (or socket path) of a Redis URL, never its password."""
    parts = urlsplit(url)
    if parts.scheme == "redis+sentinel":
        return f"master {parts.path.strip('/').split('/')[0]!r} of the sentinels {parts.netloc.rpartition('@')[2]}"
    return parts.path if parts.scheme == "unix" else f"{parts.hostname or 'localhost'}:{parts.port or 6379}"


async def wait_for_redis(url: str, seconds: float, timeout: float) -> None:
    """PING Redis until it answers or `seconds` pass (then DependencyUnavailable)."""
    loop = asyncio.get_running_loop()
    deadline, attempt, pause = loop.time() + seconds, 0, 0.5
    while True:
        attempt += 1
        client = redis_py(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            await asyncio.wait_for(client.ping(), timeout)
            if attempt > 1:
                log.info("Redis at %s answers after %d attempts", redis_where(url), attempt)
            return
        except Exception as exc:  # refused, timed out, LOADING...: retried until the deadline
            reason = f"{type(exc).__name__}: {exc}".rstrip(": ")
            left = deadline - loop.time()
            if left <= 0:
                raise DependencyUnavailable(
                    f"Redis at {redis_where(url)} did not answer within {seconds:g} s ({reason}); check "
                    "BOTFLOW_REDIS_URL and that Redis runs, or raise BOTFLOW_START_TIMEOUT") from None
            log.warning("waiting for Redis at %s (attempt %d, %s); retrying in %.1f s",
                        redis_where(url), attempt, reason, min(pause, left))
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, 5.0)
        finally:
            await client.aclose()


async def wait_for_dependencies(settings: Settings, db: Database) -> None:
    """The database, then Redis when configured, each within BOTFLOW_START_TIMEOUT."""
    await db.wait_until_reachable(settings.start_timeout)
    if settings.redis_url:
        await wait_for_redis(settings.redis_url, settings.start_timeout, settings.db_timeout)
