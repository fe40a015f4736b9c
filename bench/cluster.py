"""The Redis store on a Redis Cluster of 1 and of 3 masters (no replicas), and on a single Redis, in one run:
store-level turns (lock-free read of a dialog this process wrote, commit with a timeline record, a queued
send and its ack), Redis CPU per turn in total and per shard, and the client's Python CPU per turn.

    python bench/cluster.py [--users 400] [--turns 10] [--concurrency 64]

The masters share this machine's cores with the client, so throughput is shown but Redis CPU per turn per
shard is the figure to size with.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def redis_cpu(port: int) -> float:
    from redis import Redis

    redis = Redis(port=port)
    try:
        cpu = redis.info("cpu")
        return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
    finally:
        redis.close()


async def drive(url: str, users: int, turns: int, concurrency: int) -> tuple[int, float, float]:
    """(turns done, wall seconds, client CPU seconds)."""
    from server.runtime.stores import TurnCommit, new_token
    from server.runtime.stores.base import Ack, Changed, LockLost, StoreUnavailable
    from server.runtime.stores.redis import RedisStore
    from server.runtime.stores.resp import connect

    store = RedisStore(url, prefix="bench", client=connect(url))
    gate = asyncio.Semaphore(concurrency)
    failed = [0]

    async def one(bot: str, user: str, k: int) -> None:
        async with gate:
            token = new_token()
            loaded = await store.begin(bot, user, token, f"u{k}", optimistic=True)
            if loaded.status != 0:
                raise RuntimeError(f"{bot}/{user} turn {k}: begin answered {loaded.status}")
            item = {"id": f"{user}.{k}", "text": "hello"}
            await store.commit(bot, user, token, TurnCommit(
                {"flow": "f", "version": 1, "state": "s", "data": {"k": k}, "history": [], "turn": k + 1},
                ttl=600, dedupe=f"u{k}", outbox=[item], timeline={"t": time.time(), "e": []}), loaded)
            await store.outbox_acks([Ack(bot, user, token, (item["id"],))])

    async def user_turns(n: int) -> None:
        for k in range(turns):
            try:
                await one(f"bot{n % 200}", str(n), k)
            except (StoreUnavailable, RuntimeError, Changed, LockLost) as exc:  # counted; that user's dialog stops here
                if not failed[0]:
                    print(f"  first failure: {exc!r}")
                failed[0] += 1
                return

    wall, cpu = time.monotonic(), time.process_time()
    await asyncio.gather(*(user_turns(n) for n in range(users)))
    done = (time.monotonic() - wall, time.process_time() - cpu)
    await store.close()
    if failed[0]:
        print(f"  ({failed[0]} users stopped by a failed call)")
    return users * turns, *done


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=400)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()
    from tests.redis_cluster import LocalCluster
    from tests.redis_server import RedisServer

    print("setup | turns/s | client CPU µs/turn | Redis CPU µs/turn (all shards) | per shard")
    with RedisServer() as single:
        before = redis_cpu(single.port)
        n, wall, cpu = asyncio.run(drive(single.url, args.users, args.turns, args.concurrency))
        spent = redis_cpu(single.port) - before
        print(f"single Redis (pipelined client) | {n / wall:.0f} | {1e6 * cpu / n:.0f} | {1e6 * spent / n:.1f} |")
    for masters in (1, 3):
        with LocalCluster(masters=masters, replicas=0) as cluster:
            before = {p: redis_cpu(p) for p in cluster.ports}
            n, wall, cpu = asyncio.run(drive(cluster.url, args.users, args.turns, args.concurrency))
            shards = [1e6 * (redis_cpu(p) - before[p]) / n for p in cluster.ports]
            print(f"cluster, {masters} master(s) | {n / wall:.0f} | {1e6 * cpu / n:.0f} | {sum(shards):.1f} | "
                  + " / ".join(f"{s:.1f}" for s in shards))


if __name__ == "__main__":
    main()
