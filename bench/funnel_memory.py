"""Redis memory of the funnel counters: bytes per 1,000 dialog-hours, and the expiry record per running dialog.

    python bench/funnel_memory.py [--users 1000] [--hours 24] [--redis-url redis://127.0.0.1:PORT/0]

Each simulated hour, `--users` new users go through the registration example on the live path
(Dispatcher.handle with the Redis store): half complete it, half stop at the phone question and stay
running. Every dialog is then active in one hour: users x hours dialog-hours. It prints MEMORY USAGE of the
counter hashes (one per bot, flow version and hour), their index, and the expiry hash (one entry per
running dialog, gone when it ends or expires; the dialog's expiry time is its entry in the timers zset,
which a dialog with a timer has anyway). Without --redis-url it starts a private redis-server.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memory import BOT, PREFIX, message, private_redis  # noqa: E402
from server.runtime.catalog import BotInfo, Catalog  # noqa: E402
from server.runtime.dispatch import Dispatcher  # noqa: E402
from server.runtime.funnel_counts import BUCKETS  # noqa: E402
from server.runtime.keys import Keys  # noqa: E402
from server.runtime.outbox import Outbox  # noqa: E402
from server.channels.ratelimit import RateLimiter  # noqa: E402
from server.runtime.stores.redis import RedisStore  # noqa: E402
from server.channels.max.updates import parse_update as parse_max_update  # noqa: E402

COMPLETE = ("/start", "Иван", "+79001234567", "ivan@example.ru", "да")
STOPPED = ("/start", "Пётр")


async def measure(url: str, users: int, hours: int) -> dict[str, Any]:
    from redis.asyncio import Redis

    redis = Redis.from_url(url)
    document = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    now = [time.time() - hours * 3600]

    async def load_bot(bot_id: str) -> BotInfo | None:
        return BOT if bot_id == BOT.id else None

    async def load_document(flow_id: str, version: int) -> dict[str, Any] | None:
        return document if (flow_id, version) == ("registration", 1) else None

    async def send(bot: BotInfo, item: dict[str, Any]) -> None:
        return None

    clock = lambda: now[0]  # noqa: E731 - the simulated hours
    store = RedisStore(url, prefix=PREFIX, clock=clock)
    catalog = Catalog(load_bot, load_document)
    outbox = Outbox(store, catalog, send, None, RateLimiter(1e9))  # type: ignore[arg-type]
    dispatcher = Dispatcher(store, catalog, outbox, clock=clock)
    async for key in redis.scan_iter(match=PREFIX + ":*"):
        await redis.delete(key)
    gate = asyncio.Semaphore(64)
    seq = 0

    async def dialog(user: int, texts: tuple[str, ...]) -> None:
        nonlocal seq
        async with gate:
            for text in texts:
                seq += 1
                now[0] += step  # the hour's messages spread over it, so times in state vary
                await dispatcher.handle(BOT, parse_max_update(message(user, seq, text)))

    started = time.perf_counter()
    step = 3000 / (users * (len(COMPLETE) + len(STOPPED)) / 2)
    for hour in range(hours):
        base = 100_000 + hour * users
        start = now[0]
        await asyncio.gather(*(dialog(base + n, COMPLETE if n % 2 else STOPPED) for n in range(users)))
        now[0] = start + 3600
    await outbox.stop()
    keys = Keys(PREFIX)
    sizes: dict[str, list[int]] = {"counter hashes": [0, 0], "counter index": [0, 0], "expiry record": [0, 0]}
    async for key in redis.scan_iter(match=keys.counters + "*", count=1000):
        sizes["counter hashes"][0] += 1
        sizes["counter hashes"][1] += await redis.memory_usage(key, samples=0) or 0
    for name, key in (("counter index", keys.counter_index), ("expiry record", keys.expiry_info)):
        sizes[name][0] += 1
        sizes[name][1] += await redis.memory_usage(key, samples=0) or 0
    running = await redis.hlen(keys.expiry_info)
    # The most one hour of one flow version can hold: every field its states and transitions allow.
    every = [f"e:{st['id']}" for st in document["states"]] + [f"x:{st['id']}" for st in document["states"]]
    every += [f"{k}:{st['id']}:{b}" for st in document["states"] for k in "crb" for b in range(len(BUCKETS) + 1)]
    every += [f"f:{tr['id']}:{b}" for tr in document["transitions"] for b in [*range(len(BUCKETS) + 1), "s"]]
    await redis.hset(PREFIX + ":bound", mapping={field: 123 for field in every})
    bound = await redis.memory_usage(PREFIX + ":bound", samples=0)
    await redis.delete(PREFIX + ":bound")
    fields = await redis.hlen(next(iter([k async for k in redis.scan_iter(match=keys.counters + "*")])))
    await store.close()
    await redis.aclose()
    dialog_hours = users * hours
    counters = sizes["counter hashes"][1] + sizes["counter index"][1]
    return {"users_per_hour": users, "hours": hours, "dialog_hours": dialog_hours, "seconds": round(time.perf_counter() - started, 1),
            "counter_hashes": sizes["counter hashes"][0], "fields_per_hash": fields,
            "counter_bytes": counters, "counter_bytes_per_hash": round(sizes["counter hashes"][1] / max(1, sizes["counter hashes"][0])),
            "counter_bytes_per_1000_dialog_hours": round(counters / dialog_hours * 1000, 1),
            "fields_at_most": len(every), "bytes_at_most_per_hash": bound,
            "running_dialogs": running, "expiry_bytes": sizes["expiry record"][1],
            "expiry_bytes_per_running_dialog": round(sizes["expiry record"][1] / max(1, running), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=1000, help="new users per simulated hour")
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--redis-url", help="measure on this Redis instead of a private one (keys under benchmem:)")
    args = ap.parse_args()
    with private_redis(args.redis_url) as url:
        result = asyncio.run(measure(url, args.users, args.hours))
    print(f"{result['dialog_hours']} dialog-hours ({result['users_per_hour']} new dialogs an hour for "
          f"{result['hours']} h): {result['counter_hashes']} counter hashes of {result['fields_per_hash']} fields, "
          f"{result['counter_bytes_per_hash']} bytes each")
    print(f"counters (hashes + index): {result['counter_bytes']} bytes = "
          f"{result['counter_bytes_per_1000_dialog_hours']} bytes per 1,000 dialog-hours")
    print(f"at most (every field this flow allows, {result['fields_at_most']}): "
          f"{result['bytes_at_most_per_hash']} bytes per flow version and hour")
    print(f"expiry record: {result['expiry_bytes_per_running_dialog']} bytes per running dialog "
          f"({result['running_dialogs']} running)")
    print(json.dumps(result, ensure_ascii=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
