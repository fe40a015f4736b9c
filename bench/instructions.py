"""CPU instructions per update of the runtime and the article bot (seed), counted by callgrind.

    python bench/instructions.py [--users 100,400] [--peers botflow,seed]
    python bench/instructions.py --http [--users 300]     # botflow serve over HTTP (instructions_http.py)

Throughput on a shared host swings by a factor of two between minutes; instructions executed do not. Each
peer plays the registration-5 script for U users twice (warm-up, then measured; at most 64 in flight, the
peers' driver's concurrency), each with its input conversion, under `valgrind --tool=callgrind`, once for
each of two user counts; the difference of the two totals over the difference of updates is the cost of
one update without start-up and imports. Kernel time (syscalls) is not counted: the runtime's pipelined
client makes fewer of them, so this understates its lead in CPU time.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = Path(os.environ.get("BOTFLOW_PEERS_DIR", ROOT.parent / "shared" / "bench" / "peers"))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
IN_FLIGHT = 64


def make_peer(name: str) -> Any:
    import workload

    if name == "botflow":
        from runtime_peer import Peer

        return Peer(REDIS_URL, 1800, workload)
    import seed_handwritten

    return seed_handwritten.Peer(REDIS_URL, 1800)


async def play(name: str, users: int) -> None:
    """The workload twice for `users` users (the counted process; run under callgrind)."""
    import workload

    peer = make_peer(name)
    await peer.setup()
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(obj: Any) -> None:
        async with gate:
            await peer.feed(obj)

    for base in (70_000_000 + os.getpid() * 1000, 80_000_000 + os.getpid() * 1000):
        seq = base * 10
        for text in workload.SCRIPT:
            batch = []
            for user in range(base, base + users):
                seq += 1
                batch.append(one(await peer.parse(peer.make_raw(user, seq, text))))
            await asyncio.gather(*batch)
    confirmed = peer.confirmed
    await peer.close()
    if confirmed != 2 * users:
        raise SystemExit(f"{name}: {confirmed} of {2 * users} dialogs confirmed")


async def forget_keys(patterns: tuple[str, ...]) -> None:
    """Remove the run's keys from the shared server with the peers' driver's own clean-up (never FLUSHDB)."""
    from redis.asyncio import Redis
    from runtime import peers_driver

    redis = Redis.from_url(REDIS_URL)
    await peers_driver().flush(redis, patterns)
    await redis.aclose()


def counted(name: str, users: int) -> int:
    """Instructions callgrind counted for one whole run."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
         "--play", name, "--users", str(users)], capture_output=True, text=True, timeout=1800)
    asyncio.run(forget_keys(make_peer(name).key_patterns))  # here, outside the counted process
    found = re.search(r"Collected : ([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{name} with {users} users failed: {(done.stderr or done.stdout)[-400:]}")
    return int(found.group(1).replace(",", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", default="100,400", help="the two user counts whose difference is measured")
    ap.add_argument("--peers", default="botflow,seed")
    ap.add_argument("--http", action="store_true", help="count botflow serve's instructions per webhook update")
    ap.add_argument("--play", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(PEERS_DIR)]
    if args.play:
        asyncio.run(play(args.play, int(args.users)))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    if args.http:
        from instructions_http import webhook_instructions

        users = int(args.users.split(",")[-1]) if args.users != "100,400" else 300
        total, updates = webhook_instructions(users, REDIS_URL)
        print(f"\nregistration-5 as webhooks to botflow serve, {users} users ({updates} updates) under callgrind\n")
        print(f"| botflow serve | {total / updates:,.0f} instructions/update |")
        return 0
    low, high = (int(n) for n in args.users.split(","))
    peers = args.peers.split(",")
    # One thread per peer, its two runs one after the other: a run's clean-up removes its peer's keys.
    with ThreadPoolExecutor(max_workers=len(peers)) as pool:
        runs = dict(zip(peers, pool.map(lambda name: (counted(name, low), counted(name, high)), peers)))
    totals = {(name, users): runs[name][i] for name in peers for i, users in enumerate((low, high))}
    import workload

    updates = 2 * len(workload.SCRIPT) * (high - low)
    per = {name: (totals[(name, high)] - totals[(name, low)]) / updates for name in peers}
    print(f"\nregistration-5, instructions per update (callgrind; {low} and {high} users, twice each)\n")
    print("| peer | instructions/update |")
    print("|---|---:|")
    for name in peers:
        print(f"| {name} | {per[name]:,.0f} |")
    if "botflow" in per and "seed" in per:
        print(f"seed / botflow: {per['seed'] / per['botflow']:.2f}x the instructions per update")
    return 0


if __name__ == "__main__":
    sys.exit(main())
