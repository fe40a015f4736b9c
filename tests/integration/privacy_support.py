"""What a store still holds of one user, read from its storage directly (keys, rows, dicts)."""
from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

from server.runtime.keys import member
from server.runtime.stores.ports import DialogStore
from server.runtime.stores.memory import MemoryStore
from server.runtime.stores.redis import RedisStore
from server.runtime.stores.sql import SqlStore

TABLES = ("runtime_dialogs", "runtime_timeline", "runtime_outbox", "runtime_outbox_queue")


async def sql_leftovers(engine: Any, bot: str, user: str) -> list[str]:
    """Rows naming the user in every runtime table (marks by their `<user>:` key, actions by their JSON)."""
    found: list[str] = []
    async with engine.connect() as conn:
        for table in TABLES:
            n = await conn.scalar(text(f"SELECT count(*) FROM {table} WHERE bot_id = :b AND user_id = :u"),
                                  {"b": bot, "u": user})
            found += [table] * int(n)
        for (key,) in await conn.execute(text("SELECT key FROM runtime_dedupe WHERE bot_id = :b"), {"b": bot}):
            if key.startswith(f"{user}:"):
                found.append(f"runtime_dedupe {key}")
        for (item,) in await conn.execute(text("SELECT item FROM runtime_actions")):
            if (json.loads(item).get("bot"), json.loads(item).get("user")) == (bot, user):
                found.append("runtime_actions")
    return found


async def redis_leftovers(store: RedisStore, bot: str, user: str) -> list[str]:
    """Every key under the store's prefix (SCAN) that names the user or holds an entry of theirs."""
    found: list[str] = []
    name = member(bot, user)
    mine = f"{{{bot}:{user}}}".encode()
    keys = [key async for key in store.conn.scan(store.keys.base + "*")]  # every master's, in a cluster
    for key in keys:
        kind = await store.client.call("TYPE", key)
        kind = kind.decode() if isinstance(kind, bytes) else str(kind)
        if mine in key:
            found.append(key.decode())
        elif kind == "zset" and await store.client.call("ZSCORE", key, name) is not None:
            found.append(f"{key.decode()} {name}")
        elif kind == "hash":
            for field, value in _pairs(await store.client.call("HGETALL", key)):
                if field == name.encode() or value == name.encode() or _names(value, bot, user):
                    found.append(f"{key.decode()} {field.decode()}")
        elif kind == "stream":
            for sid, fields in await store.client.call("XRANGE", key, "-", "+"):
                if fields[1] == name.encode():
                    found.append(f"{key.decode()} {sid.decode()}")
    if store.timeline_db is not None:
        found += await sql_leftovers(store.timeline_db, bot, user)
    return found


def _pairs(flat: list[bytes] | dict[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    if isinstance(flat, dict):  # redis-py answers HGETALL with a dict
        return list(flat.items())
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def _names(value: bytes, bot: str, user: str) -> bool:
    try:
        item = json.loads(value)
    except ValueError:
        return False
    return isinstance(item, dict) and (item.get("bot"), item.get("user")) == (bot, user)


def memory_leftovers(store: MemoryStore, bot: str, user: str) -> list[str]:
    """Entries of the user in every dict of the memory store."""
    key = (bot, user)
    found = [name for name in ("_dialogs", "_locks", "_timelines", "_timers", "_outbox", "_outq", "_owners")
             if key in getattr(store, name)]
    found += [f"_dedupe {m}" for m in store._dedupe if m[:2] == key]
    found += [f"_actions {i}" for i, (a, _) in store._actions.items() if (a.get("bot"), a.get("user")) == key]
    return found


async def leftovers(store: DialogStore, bot: str, user: str) -> list[str]:
    """What the store still holds of the user, whichever store it is."""
    if isinstance(store, MemoryStore):
        return memory_leftovers(store, bot, user)
    if isinstance(store, SqlStore):
        return await sql_leftovers(store.engine, bot, user)
    assert isinstance(store, RedisStore)
    return await redis_leftovers(store, bot, user)
