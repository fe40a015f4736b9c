"""The registration-5 workload in process against every dialog store, in one run.

    python bench/stores.py [--users 200] [--concurrency 64] [--rounds 3] [--stores memory,sqlite,postgres,redis]
                           [--before ../other-worktree | --baseline]

Each run is `Dispatcher.handle` through the peers' own driver (bench/runtime_peer.py, as `bench/runtime.py`
drives it on Redis) in a process of its own, so one store's pools and caches never meet another's. Rounds
interleave the stores (and, with `--before`, the same runs of another checkout's code: every store of both
trees, alternating), since on a shared host a single run swings by a third; the table gives each run, then
medians. CPU per update is this process's (Python, SQLite's thread included) plus the server's: Redis's own
`used_cpu`, PostgreSQL's backends of the bench database read from /proc.

Each SQL store's median is also put against issue 38's figures for the SQL store before its rework
(ISSUE_BASELINE: SQLite 115, PostgreSQL 83 updates/s, medians of 3 runs on a 2-core machine). `--baseline`
measures that old store in the same run instead: it checks out BASELINE_COMMIT (the last commit before the
rework) into a temporary folder and runs it as `--before`, interleaved with this tree.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PEERS_DIR = Path(os.environ.get("BOTFLOW_PEERS_DIR", "/work/shared/bench/peers"))
STORES = ("memory", "sqlite", "postgres", "redis")
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")
# Issue 38, "The SQL store is 30-40x slower than Redis": updates/s (min / median / max of 3) and p50 ms.
ISSUE_BASELINE = {"sqlite": {"updates_per_s": (104, 115, 125), "p50_ms": 541},
                  "postgres": {"updates_per_s": (81, 83, 117), "p50_ms": 742}}
# The last commit before the SQL store's rework (75cce7e: leases, one statement a turn, batched SQLite).
BASELINE_COMMIT = "75cce7e^"


def backends_cpu(database: str) -> float:
    """CPU seconds used so far by the PostgreSQL backends serving `database` (their process titles name it)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
            if not title.startswith(b"postgres: ") or f" {database} ".encode() not in title:
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_ADMIN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def one(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """One timed run of the workload on `kind`, with the code of the tree this file was started in."""
    root = Path(args.tree).resolve() if args.tree else HERE.parent
    for path in (PEERS_DIR, root / "bench", root):
        sys.path.insert(0, str(path))
    import workload
    from runtime_peer import Peer
    from runtime import peers_driver

    driver = peers_driver()
    database = f"bench_stores_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    workdir = tempfile.TemporaryDirectory(prefix="bench-stores-")
    server_cpu = {"before": 0.0, "after": 0.0}

    class StorePeer(Peer):
        """The runtime peer on the chosen store; a per-process rate limiter where there is no Redis."""

        name = kind
        key_patterns = Peer.key_patterns if kind == "redis" else ()

        async def setup(self) -> None:
            if kind == "redis":
                return await super().setup()
            from server.channels.ratelimit import RateLimiter
            from server.runtime.catalog import Catalog
            from server.runtime.dispatch import Dispatcher
            from server.runtime.lifecycle import tune_gc
            from server.runtime.outbox import Outbox
            from runtime_peer import BOT, bench_bot

            self.engine = None
            if kind == "memory":
                from server.runtime.stores.memory import MemoryStore

                self.store = MemoryStore()
            else:
                from server.db.engine import make_engine
                from server.db.migrate import upgrade_blocking
                try:
                    from server.runtime.stores.sql import sql_store
                except ImportError:  # a tree from before the dialects split (the issue's baseline): one class
                    from server.runtime.stores.sql import SqlStore as sql_store  # type: ignore[no-redef]

                if kind == "sqlite":
                    url = f"sqlite+aiosqlite:///{workdir.name}/runtime.db"
                else:
                    await _admin(f'CREATE DATABASE "{database}"')
                    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{database}"
                await asyncio.to_thread(upgrade_blocking, url)
                self.engine = make_engine(url)  # as the app makes it (server.db.engine.Database)
                self.store = sql_store(self.engine)
            bot = bench_bot()

            async def load_bot(bot_id: str) -> Any:
                return bot if bot_id == BOT.id else None

            async def load_document(flow_id: str, version: int) -> Any:
                return self.document if flow_id == BOT.flow_id and version == BOT.version else None

            async def send(bot: Any, item: dict[str, Any]) -> None:
                if item["op"] == "send":
                    self.replies[item["chat_id"]].append(item["text"])

            catalog = Catalog(load_bot, load_document)
            self.outbox = Outbox(self.store, catalog, send, None, RateLimiter(1_000_000))  # type: ignore[arg-type]
            self.dispatcher = Dispatcher(self.store, catalog, self.outbox)
            if self.serve_gc:
                tune_gc()

        async def close(self) -> None:
            await self.store.close()
            if getattr(self, "engine", None) is not None:
                await self.engine.dispose()

    drive = driver.drive

    async def timed_drive(*a: Any, **kw: Any) -> Any:
        """The driver's timed window, with the PostgreSQL backends' CPU read on either side of it."""
        if kind == "postgres":
            server_cpu["before"] = backends_cpu(database)
        try:
            return await drive(*a, **kw)
        finally:
            if kind == "postgres":
                server_cpu["after"] = backends_cpu(database)

    driver.drive = timed_drive
    driver.load_peer = lambda name, url, ttl: StorePeer(url, ttl, workload)
    ns = argparse.Namespace(
        peer=kind, users=args.users, concurrency=args.concurrency, redis_url=args.redis_url, ttl=1800,
        warmup_users=args.warmup_users, parse_in_window=False, selftest=False, profile=None, profile_out=None,
        gc_freeze=True, tag="stores", aiogram_pin_response=False, aiogram_async_state_filters=False)
    if args.profile:
        ns.profile, ns.profile_out = "cprofile", str(Path(args.profile) / f"profile-{kind}")
    try:
        result = asyncio.run(driver.main_async(ns))
    finally:
        if kind == "postgres":
            asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        workdir.cleanup()
    server_s = result["redis_cpu_s"] if kind == "redis" else server_cpu["after"] - server_cpu["before"]
    result["server_cpu_us_per_update"] = round(1e6 * server_s / result["updates"], 1)
    result["cpu_us_per_update"] = round(result["py_cpu_us_per_update"] + result["server_cpu_us_per_update"], 1)
    return result


def checkout(commit: str) -> str:
    """`commit` of this repository unpacked into a temporary folder (beside a link to the peers' folder,
    which older trees find at ../shared/bench/peers); removed when the run ends."""
    import atexit
    import shutil

    folder = Path(tempfile.mkdtemp(prefix="bench-stores-baseline-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "shared" / "bench").mkdir(parents=True)
    (folder / "shared" / "bench" / "peers").symlink_to(PEERS_DIR)
    tree = folder / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", commit], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return str(tree)


def spawn(tree: Path, kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """One run in a fresh process, importing the runtime from `tree`."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one", kind, "--tree", str(tree), "--users",
         str(args.users), "--concurrency", str(args.concurrency), "--warmup-users", str(args.warmup_users),
         "--redis-url", args.redis_url, *(["--profile", args.profile] if args.profile else [])],
        capture_output=True, text=True, timeout=1800, cwd=tree)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"peer": kind, "error": " | ".join(tail) or f"exit {done.returncode}"}
    return json.loads(lines[-1])


FIGURES = ("updates_per_s", "p50_ms", "p99_ms", "py_cpu_us_per_update", "server_cpu_us_per_update",
           "cpu_us_per_update")


def line(label: str, r: dict[str, Any]) -> str:
    if "error" in r:
        return f"| {label} | could not run: {r['error']} |"
    return (f"| {label} | {r['updates_per_s']:.0f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
            f"{r['py_cpu_us_per_update']:.0f} | {r['server_cpu_us_per_update']:.0f} | {r['cpu_us_per_update']:.0f} | "
            f"{'yes' if r.get('ok') else 'NO'} |")


def medians(results: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in results if "error" not in r]
    if not good:
        return results[-1]
    return {"ok": all(r.get("ok") for r in good), **{k: statistics.median(r[k] for r in good) for k in FIGURES}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=200, help="users, 7 updates each (the measured run)")
    ap.add_argument("--concurrency", type=int, default=64, help="updates in flight (the bench's load)")
    ap.add_argument("--warmup-users", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stores", default=",".join(STORES))
    ap.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    ap.add_argument("--before", default="", help="another checkout: its runs interleave with this tree's")
    ap.add_argument("--baseline", action="store_true",
                    help=f"--before a checkout of {BASELINE_COMMIT}, the SQL store before its rework")
    ap.add_argument("--profile", default="", metavar="DIR", help="cProfile each run into DIR (slower)")
    ap.add_argument("--one", default="", help=argparse.SUPPRESS)
    ap.add_argument("--tree", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args), ensure_ascii=False), flush=True)
        return 0
    kinds = [k for k in args.stores.split(",") if k]
    if args.baseline and not args.before:
        args.before = checkout(BASELINE_COMMIT)
    trees = {"": HERE.parent} if not args.before else {"before": Path(args.before).resolve(), "after": HERE.parent}
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {(t, k): [] for k in kinds for t in trees}
    for n in range(max(1, args.rounds)):
        order = list(trees.items()) if n % 2 == 0 else list(reversed(trees.items()))
        for kind in kinds:
            for label, tree in order:
                result = spawn(tree, kind, args)
                runs[(label, kind)].append(result)
                print(line(f"{label} {kind}".strip(), result), file=sys.stderr, flush=True)
    print(f"\nregistration-5 in process, U={args.users}, C={args.concurrency}, {max(1, args.rounds)} interleaved "
          "round(s): each run, then the medians\n")
    head = ("| store | updates/s | p50 ms | p99 ms | Python CPU µs/update | server CPU µs/update | "
            "CPU µs/update | ok |\n|---|---:|---:|---:|---:|---:|---:|:-:|")
    print(head)
    for (label, kind), results in runs.items():
        for r in results:
            print(line(f"{label} {kind}".strip(), r))
    print("\nmedians\n\n" + head)
    mid = {key: medians(results) for key, results in runs.items()}
    for (label, kind), r in mid.items():
        print(line(f"{label} {kind}".strip(), r))
    for label in trees:
        redis = mid.get((label, "redis"))
        for kind in ("sqlite", "postgres"):
            sql = mid.get((label, kind))
            if redis and sql and "error" not in redis and "error" not in sql:
                print(f"{label or 'this tree'}: {kind} / redis {sql['updates_per_s'] / redis['updates_per_s']:.3f}x "
                      f"updates/s, p50 {sql['p50_ms']:.1f} against {redis['p50_ms']:.1f} ms")
    for label in trees:
        for kind, issue in ISSUE_BASELINE.items():
            r = mid.get((label, kind))
            if r is not None and "error" not in r:
                print(f"{label or 'this tree'}: {kind} against issue 38's baseline {r['updates_per_s'] / issue['updates_per_s'][1]:.1f}x "
                      f"updates/s ({r['updates_per_s']:.0f} against {issue['updates_per_s'][1]}), p50 {r['p50_ms']:.1f} "
                      f"against {issue['p50_ms']} ms")
    if args.before:
        for kind in kinds:
            b, a = mid[("before", kind)], mid[("after", kind)]
            if "error" not in b and "error" not in a:
                print(f"{kind}: after / before {a['updates_per_s'] / b['updates_per_s']:.2f}x updates/s, "
                      f"p50 {b['p50_ms']:.1f} -> {a['p50_ms']:.1f} ms, CPU/update "
                      f"{b['cpu_us_per_update']:.0f} -> {a['cpu_us_per_update']:.0f} µs")
    print(json.dumps({f"{t} {k}".strip(): v for (t, k), v in runs.items()}, ensure_ascii=False), file=sys.stderr)
    return 0 if all(r.get("ok") for rs in runs.values() for r in rs) else 2


if __name__ == "__main__":
    sys.exit(main())
