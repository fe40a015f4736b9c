"""Redis memory per idle dialog: N users each send /start and a name to the registration example, then idle.

    python bench/memory.py [--users 2000] [--redis-url redis://127.0.0.1:PORT/0]

Without --redis-url it starts a private redis-server on a free port (no persistence), so `used_memory`
moves only with our keys. It prints the `used_memory` delta per dialog and a breakdown of the keys by
kind (MEMORY USAGE, which counts each key's own allocation: the delta also holds the keyspace's
dictionary growth). The turns run through the live path: Dispatcher.handle with the Redis store and
the outbox, replies recorded instead of sent; timeline records are moved on to a SQLite database as the
app moves them to its own, before the measurement.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.runtime.catalog import BotInfo, Catalog  # noqa: E402
from server.runtime.dispatch import Dispatcher  # noqa: E402
from server.runtime.outbox import Outbox  # noqa: E402
from server.channels.ratelimit import RateLimiter  # noqa: E402
from server.runtime.stores.redis import RedisStore  # noqa: E402
from server.channels.max.updates import parse_update as parse_max_update  # noqa: E402

PREFIX = "benchmem"
BOT = BotInfo("membot", "token", "secret", "registration", 1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def message(user: int, seq: int, text: str) -> dict[str, Any]:
    return {"update_type": "message_created", "timestamp": 1_785_182_044_286 + seq,
            "message": {"sender": {"user_id": user, "first_name": "User", "is_bot": False},
                        "recipient": {"chat_id": user, "chat_type": "dialog"},
                        "timestamp": 1_785_182_044_286 + seq,
                        "body": {"mid": f"mid.{seq:032x}", "seq": seq, "text": text}}}


def kind(key: str) -> str:
    """The key's kind: the part after a dialog's hash tag (d, t, u, ...) or the global key's name."""
    if ":dd:" in key:
        return "duplicate marks (sets per bot and time bucket)"
    if ":fn:" in key:
        return "funnel counters (hashes per bot, flow version and hour)"
    match = re.search(r"\}:([a-z]+)", key)
    if match:
        return {"d": "dialog", "t": "timeline", "u": "duplicate mark", "o": "outbox", "l": "lock"}.get(
            match.group(1), match.group(1))
    name = key.rsplit(":", 1)[-1] if ":" in key else key
    return {"timers": "timers (due time, or expiry)", "fxi": "funnel expiry record (hash)",
            "fnk": "funnel counter index"}.get(name, name)


async def measure(url: str, users: int) -> dict[str, Any]:
    from redis.asyncio import Redis

    redis = Redis.from_url(url)
    document = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))

    async def load_bot(bot_id: str) -> BotInfo | None:
        return BOT if bot_id == BOT.id else None

    async def load_document(flow_id: str, version: int) -> dict[str, Any] | None:
        return document if (flow_id, version) == ("registration", 1) else None

    sent = 0

    async def send(bot: BotInfo, item: dict[str, Any]) -> None:
        nonlocal sent
        sent += 1

    from server.db.engine import make_engine
    from server.db.migrate import upgrade_blocking

    database = f"sqlite+aiosqlite:///{tempfile.mkdtemp(prefix='botflow-memory-')}/timeline.db"
    await asyncio.to_thread(upgrade_blocking, database)
    engine = make_engine(database)
    store = RedisStore(url, prefix=PREFIX, timeline_db=engine)  # records move on to the database, as served
    catalog = Catalog(load_bot, load_document)
    outbox = Outbox(store, catalog, send, None, RateLimiter(1e9))  # type: ignore[arg-type]
    dispatcher = Dispatcher(store, catalog, outbox)
    await dispatcher.handle(BOT, parse_max_update(message(1, 0, "/start")))  # scripts loaded, caches warm
    async for key in redis.scan_iter(match=PREFIX + ":*"):
        await redis.delete(key)
    before = (await redis.info("memory"))["used_memory"]
    seq = 1
    gate = asyncio.Semaphore(64)

    async def dialog(user: int) -> None:
        nonlocal seq
        async with gate:
            for text in ("/start", "Иван"):
                seq += 1
                await dispatcher.handle(BOT, parse_max_update(message(user, seq, text)))

    started = time.perf_counter()
    await asyncio.gather(*(dialog(1000 + n) for n in range(users)))
    await outbox.stop()
    while await store.move_timeline() > 0:  # what the app's background move does every 0.5 s
        pass
    elapsed = time.perf_counter() - started
    after = (await redis.info("memory"))["used_memory"]
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    async for key in redis.scan_iter(match=PREFIX + ":*", count=1000):
        size = await redis.memory_usage(key, samples=0) or 0
        entry = by_kind[kind(key.decode())]
        entry[0] += 1
        entry[1] += size
    await store.close()
    await engine.dispose()
    await redis.aclose()
    return {"users": users, "seconds": round(elapsed, 2), "replies_sent": sent,
            "used_memory_delta": after - before, "bytes_per_dialog": round((after - before) / users, 1),
            "keys": {name: {"keys": n, "bytes": size, "bytes_per_dialog": round(size / users, 1)}
                     for name, (n, size) in sorted(by_kind.items(), key=lambda kv: -kv[1][1])}}


@contextmanager
def private_redis(url: str | None) -> Iterator[str]:
    """`url` when given; else a Redis of our own (no persistence) on a free port, stopped afterwards."""
    if url is not None:
        yield url
        return
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                               "--dir", tempfile.mkdtemp(prefix="botflow-bench-")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=2000)
    ap.add_argument("--redis-url", help="measure on this Redis instead of a private one (keys under benchmem:)")
    args = ap.parse_args()
    with private_redis(args.redis_url) as url:
        result = asyncio.run(measure(url, args.users))
    print(f"{result['users']} idle dialogs after /start and a name: {result['bytes_per_dialog']} bytes of Redis "
          f"per dialog (used_memory delta {result['used_memory_delta']})")
    print("| key kind | keys | bytes per dialog (MEMORY USAGE) |")
    print("|---|---:|---:|")
    for name, entry in result["keys"].items():
        print(f"| {name} | {entry['keys']} | {entry['bytes_per_dialog']} |")
    print(json.dumps(result, ensure_ascii=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
