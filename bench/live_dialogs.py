"""What the live-dialog counts and listing cost for a bot with many dialogs (Redis and PostgreSQL).

    python bench/live_dialogs.py [--dialogs 100000] [--redis-url redis://127.0.0.1:6379/0]
                                 [--pg-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres]

Writes N idle dialogs of one bot (spread over 6 states and 2 versions) straight into the store's storage
under a private Redis prefix and a private PostgreSQL database, then times `dialog_counts`, a first page,
a prefix search and an exact search, and deletes what it wrote.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from server.runtime.stores import dialog_codec  # noqa: E402
from server.runtime.stores.listing import Search  # noqa: E402
from server.runtime.stores.redis import RedisStore  # noqa: E402

BOT = "benchlive"
STATES = ["ask_name", "ask_phone", "ask_email", "ask_pdn", "menu", "support"]


def dialog(n: int) -> dict:
    now = time.time()
    return {"flow": "registration", "version": 1 + n % 2, "state": STATES[n % len(STATES)], "data": {"name": "Иван"},
            "history": ["ask_name"], "attempts": 0, "started_at": now, "updated_at": now, "entered_at": now,
            "reminded": False, "timeout_held": False, "due": None}


async def timed(label: str, call, repeat: int = 3) -> None:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        result = await call()
        best = min(best, time.perf_counter() - started)
    size = len(result) if isinstance(result, dict) else len(result.dialogs)
    print(f"  {label:<28} {best * 1000:8.1f} ms  ({size} rows)")


async def measure(store, n: int) -> None:
    await timed("counts", lambda: store.dialog_counts(BOT))
    await timed("first page of 25", lambda: store.dialog_page(BOT, Search(limit=25)))
    await timed("prefix '12345' page", lambda: store.dialog_page(BOT, Search(user="12345", limit=25)))
    await timed("exact user", lambda: store.dialog_page(BOT, Search(user=str(n // 2), exact=True)))
    await timed("state filter page", lambda: store.dialog_page(BOT, Search(state="support", limit=25)))


async def redis_bench(url: str, n: int) -> None:
    prefix = f"benchlive:{uuid.uuid4().hex[:8]}"
    store = RedisStore(url, prefix=prefix)
    raw = Redis.from_url(url)
    try:
        for start in range(0, n, 5000):
            pipe = raw.pipeline(transaction=False)
            for i in range(start, min(n, start + 5000)):
                pipe.set(store.keys.user(BOT, str(i)) + "d", dialog_codec.encode(dialog(i)), ex=3600)
            await pipe.execute()
        print(f"Redis, {n} dialogs of one bot ({await raw.dbsize()} keys in the database):")
        await measure(store, n)
    finally:
        batch = [key async for key in raw.scan_iter(match=prefix + "*", count=5000)]
        for i in range(0, len(batch), 5000):
            await raw.unlink(*batch[i:i + 5000])
        await raw.aclose()
        await store.close()


async def pg_bench(url: str, n: int) -> None:
    import asyncpg

    from server.db.engine import make_engine
    from server.runtime.stores.sql import sql_store
    from server.db.base import Base
    import server.db.all_models  # noqa: F401

    name = f"benchlive_{uuid.uuid4().hex[:8]}"
    admin_dsn = url.replace("postgresql+asyncpg", "postgresql")
    admin = await asyncpg.connect(admin_dsn)
    await admin.execute(f"CREATE DATABASE {name}")
    engine = make_engine(url.rsplit("/", 1)[0] + "/" + name)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        rows = [(BOT, str(i), msgspec.json.encode(dialog(i)).decode(), time.time() + 3600) for i in range(n)]
        conn = await asyncpg.connect(admin_dsn.rsplit("/", 1)[0] + "/" + name)
        await conn.copy_records_to_table("runtime_dialogs", records=rows,
                                         columns=["bot_id", "user_id", "session", "expires_at"])
        await conn.execute("ANALYZE runtime_dialogs")
        await conn.close()
        print(f"PostgreSQL, {n} dialogs of one bot:")
        await measure(sql_store(engine), n)
    finally:
        await engine.dispose()
        await admin.execute(f"DROP DATABASE {name}")
        await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogs", type=int, default=100_000)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--pg-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    asyncio.run(redis_bench(args.redis_url, args.dialogs))
    asyncio.run(pg_bench(args.pg_url, args.dialogs))


if __name__ == "__main__":
    main()
