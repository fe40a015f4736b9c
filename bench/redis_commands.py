"""Redis work per update, command by command: the registration-5 workload in process (bench/runtime.py's run,
the peers' driver) against a private redis-server, with `INFO commandstats` read before and after.

    python bench/redis_commands.py [--users 1000] [--concurrency 64]

Prints each command's calls and Redis CPU (µs) per update, then the totals. The counts include the driver's
warm-up users and its own few INFO calls, so the totals sit a little above the driver's own figure; they are
counted over the whole run, background loops (outbox, timers, timeline) included.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def stats(url: str) -> dict[str, tuple[int, float]]:
    """command -> (calls, µs of Redis CPU in it) so far."""
    from redis import Redis

    redis = Redis.from_url(url)
    try:
        return {name.removeprefix("cmdstat_"): (int(v["calls"]), float(v["usec"]))
                for name, v in redis.info("commandstats").items()}
    finally:
        redis.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()
    from runtime import run_botflow
    from tests.redis_server import RedisServer

    with RedisServer() as server:
        before = stats(server.url)
        ns = argparse.Namespace(users=args.users, concurrency=args.concurrency, redis_url=server.url,
                                parse_in_window=False, default_gc=False, profile=False)
        result = run_botflow(ns)
        after = stats(server.url)
    updates = result["updates"] + max(200, 2 * args.concurrency) * 7  # the warm-up's updates ran too
    rows = []
    for name, (calls, usec) in after.items():
        was = before.get(name, (0, 0.0))
        if calls - was[0]:
            rows.append((name, (calls - was[0]) / updates, (usec - was[1]) / updates))
    rows.sort(key=lambda r: -r[1])
    print(f"{'command':<14} {'calls/update':>12} {'µs/update':>10}")
    for name, calls, usec in rows:
        print(f"{name:<14} {calls:>12.3f} {usec:>10.2f}")
    print(f"{'total':<14} {sum(r[1] for r in rows):>12.2f} {sum(r[2] for r in rows):>10.2f}")
    print(json.dumps({"driver_redis_cmds_per_update": result.get("redis_cmds_per_update"),
                      "driver_redis_cpu_us_per_update": result.get("redis_cpu_us_per_update"),
                      "updates": result["updates"]}))


if __name__ == "__main__":
    main()
