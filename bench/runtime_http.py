"""Webhook mode: registration-5 as MAX webhook POSTs over loopback to `botflow serve` (replies to the fake MAX),
and the same load against a bare Litestar app (the HTTP ceiling)."""
from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOKEN = "bench-admin-token"
SECRET = "bench_secret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status < 500:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def call(method: str, url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read() or b"null")


class Connection:
    """A keep-alive HTTP/1.1 connection with a minimal request/response codec (cheap for the load generator)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def post(self, request: bytes) -> int:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        if length:
            await self.reader.readexactly(length)
        return status


def request_bytes(port: int, body: bytes) -> bytes:
    return (f"POST /webhooks/max/bench HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"X-Max-Bot-Api-Secret: {SECRET}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


async def drive(port: int, items: list[tuple[int, bytes]], concurrency: int) -> dict[str, Any]:
    """The peers' scheduling: round-major, at most C in flight, one user never has two in flight."""
    pool: asyncio.Queue[Connection] = asyncio.Queue()
    for _ in range(concurrency):
        pool.put_nowait(Connection(*await asyncio.open_connection("127.0.0.1", port)))
    sem = asyncio.Semaphore(concurrency)
    last: dict[int, asyncio.Task[None]] = {}
    latencies: list[float] = []
    failures = 0

    async def one(request: bytes) -> None:
        nonlocal failures
        conn = await pool.get()
        try:
            t0 = time.perf_counter()
            status = await conn.post(request)
            latencies.append(time.perf_counter() - t0)
            failures += status != 200
        finally:
            pool.put_nowait(conn)
            sem.release()

    started = time.perf_counter()
    for user, request in items:
        await sem.acquire()
        prev = last.get(user)
        if prev is not None and not prev.done():
            await prev
        last[user] = asyncio.create_task(one(request))
    await asyncio.gather(*last.values())
    elapsed = time.perf_counter() - started
    while not pool.empty():
        pool.get_nowait().writer.close()
    lat = sorted(latencies)
    pick = lambda q: lat[max(1, math.ceil(q * len(lat))) - 1] * 1000  # noqa: E731
    return {"updates": len(items), "seconds": round(elapsed, 3), "updates_per_s": round(len(items) / elapsed, 1),
            "p50_ms": round(pick(0.5), 2), "p99_ms": round(pick(0.99), 2), "non_200": failures}


def workload_items(port: int, users: list[int], seq0: int,
                   script: tuple[str, ...] | None = None) -> list[tuple[int, bytes]]:
    """Each user's webhooks for `script` (default: the whole registration-5 script), round-major."""
    import workload
    from runtime_peer import make_raw

    items, seq = [], seq0
    for text in workload.SCRIPT if script is None else script:
        for user in users:
            seq += 1
            items.append((user, request_bytes(port, msgspec.json.encode(make_raw(user, seq, text)))))
    return items


def load(port: int, users: int, concurrency: int, base: int) -> dict[str, Any]:
    warm = [base + 9_000_000 + i for i in range(max(200, 2 * concurrency))]
    asyncio.run(drive(port, workload_items(port, warm, 50_000_000 + base), concurrency))
    ids = [base + i for i in range(1, users + 1)]
    return asyncio.run(drive(port, workload_items(port, ids, base * 10), concurrency))


def replies_ok(fake_port: int, users: list[int]) -> int:
    """Wrong replies, counted like the peers' driver: each position differing from the expected 7 texts."""
    import workload

    calls = call("GET", f"http://127.0.0.1:{fake_port}/_fake/calls")["calls"]
    got: dict[str, list[str]] = {}
    for c in calls:
        if c["path"] == "/messages" and c["status"] == 200:
            got.setdefault(c["query"].get("chat_id"), []).append(c["json"]["text"])
    wrong = 0
    for user in users:
        texts = got.get(str(user), [])
        wrong += sum(1 for i in range(max(len(texts), 7)) if i >= len(texts) or i >= 7
                     or texts[i] != workload.EXPECTED_REPLIES[i])
    return wrong


def delete_prefix(url: str, prefix: str) -> None:
    """Remove the run's keys (never FLUSHDB: the server is shared)."""
    from redis import Redis

    redis = Redis.from_url(url)
    batch = list(redis.scan_iter(match=prefix + ":*", count=1000))
    for start in range(0, len(batch), 500):
        redis.unlink(*batch[start:start + 500])
    redis.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def redis_work(url: str) -> tuple[float, int]:
    """(Redis's own CPU seconds so far, commands it has run so far), from INFO cpu and INFO commandstats."""
    from redis import Redis

    redis = Redis.from_url(url)
    try:
        cpu = redis.info("cpu")
        calls = sum(stat["calls"] for stat in redis.info("commandstats").values())
    finally:
        redis.close()
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]), calls


def measured(port: int, args: Any, base: int, pids: list[int], redis_url: str | None = None) -> dict[str, Any]:
    """One load run plus the CPU the serving processes spent per update (and, given `redis_url` of a Redis
    no one else uses, Redis's CPU and commands per update)."""
    redis_before = redis_work(redis_url) if redis_url else (0.0, 0)
    before = [cpu_seconds(pid) for pid in pids]
    result = load(port, args.users, args.concurrency, base)
    spent = [cpu_seconds(pid) - b for pid, b in zip(pids, before)]
    # Warm-up updates ran inside the CPU window too.
    count = result["updates"] + 7 * max(200, 2 * args.concurrency)
    result["server_cpu_us_per_update"] = round(1e6 * spent[0] / count)
    if len(spent) > 1:
        result["fake_max_cpu_us_per_update"] = round(1e6 * spent[1] / count)
    if redis_url:
        redis_after = redis_work(redis_url)
        result["redis_cpu_us_per_update"] = round(1e6 * (redis_after[0] - redis_before[0]) / count, 1)
        # Less the two INFO commandstats calls of the readings themselves (INFO cpu comes before the first).
        result["redis_cmds_per_update"] = round((redis_after[1] - redis_before[1] - 2) / count, 2)
    return result


def server_env(tmp: str, redis_url: str, prefix: str, fake_port: int) -> dict[str, str]:
    """`botflow serve`'s environment in the webhook benchmarks: SQLite in `tmp`, Redis, the fake MAX."""
    return {**os.environ, "BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/bench.db",
            "BOTFLOW_REDIS_URL": redis_url, "BOTFLOW_REDIS_PREFIX": prefix,
            "BOTFLOW_MAX_API_URL": f"http://127.0.0.1:{fake_port}", "BOTFLOW_BOOTSTRAP_TOKEN": TOKEN,
            "BOTFLOW_MAX_RATE": "1000000", "BOTFLOW_SECRET_KEY": "bench", "PYTHONPATH": str(ROOT)}


def publish_bench_bot(app_port: int) -> None:
    """The registration-5 flow frozen and published to the bot `bench`, through the API."""
    from runtime_peer import flow_document
    import workload

    api = f"http://127.0.0.1:{app_port}/api"
    call("POST", f"{api}/flows", flow_document(workload))
    call("POST", f"{api}/flows/registration5/versions", {"note": "bench"})
    call("POST", f"{api}/bots", {"id": "bench", "title": "Bench", "token": "bench-token", "webhook_secret": SECRET})
    call("POST", f"{api}/bots/bench/publish", {"flow": "registration5", "version": 1, "sessions": "keep"})


@contextmanager
def botflow_served(redis_url: str, prefix: str) -> Iterator[SimpleNamespace]:
    """The fake MAX and `botflow serve` (SQLite in a temporary folder, Redis keys under `prefix`) with the
    bench bot published; yields their ports and processes, stops both and removes the keys afterwards."""
    fake_port, app_port = free_port(), free_port()
    procs: list[subprocess.Popen[bytes]] = []
    tmp = tempfile.mkdtemp(prefix="botflow-bench-")
    try:
        fake = subprocess.Popen([sys.executable, "-m", "server.channels.max.fake", "--port", str(fake_port)],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(fake)
        server = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(app_port)], cwd=tmp,
                                  env=server_env(tmp, redis_url, prefix, fake_port),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        wait_ready(f"http://127.0.0.1:{fake_port}/_fake/calls")
        wait_ready(f"http://127.0.0.1:{app_port}/readyz")
        publish_bench_bot(app_port)
        yield SimpleNamespace(fake_port=fake_port, app_port=app_port, fake=fake, server=server)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)
        delete_prefix(redis_url, prefix)


def median(runs: list[dict[str, Any]], key: str) -> float:
    values = sorted(run[key] for run in runs)
    return values[len(values) // 2]


def run_http(args: Any) -> None:
    """Interleaved runs (botflow, ceiling, botflow, ceiling, ...) so machine drift hits both alike."""
    rounds = getattr(args, "rounds", 3)
    bare_port = free_port()
    ours: list[dict[str, Any]] = []
    ceiling: list[dict[str, Any]] = []
    with botflow_served(args.redis_url, f"bench:http:{os.getpid()}") as served:
        bare = subprocess.Popen([sys.executable, str(HERE / "bare_app.py"), "--port", str(bare_port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(f"http://127.0.0.1:{bare_port}/schema")
            for n in range(rounds):
                base = 1_000_000 * (n + 1)
                call("POST", f"http://127.0.0.1:{served.fake_port}/_fake/reset", {})
                ours.append(measured(served.app_port, args, base, [served.server.pid, served.fake.pid]))
                ceiling.append(measured(bare_port, args, 100_000_000 + base, [bare.pid]))
            # The fake was reset before the last botflow round: its replies are checked text by text.
            ours[-1]["wrong_replies"] = replies_ok(served.fake_port,
                                                   [1_000_000 * rounds + i for i in range(1, args.users + 1)])
        finally:
            bare.terminate()
            bare.wait(10)
    print(f"\nregistration-5 as webhooks over loopback, U={args.users}, C={args.concurrency}, "
          f"{rounds} interleaved rounds, medians\n")
    print("| target | updates/s | p50 ms | p99 ms | server CPU µs/update | non-200 |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, runs in (("botflow serve (Redis, replies to the fake MAX)", ours),
                        ("bare Litestar, route returns 200", ceiling)):
        print(f"| {label} | {median(runs, 'updates_per_s'):.0f} | {median(runs, 'p50_ms')} | "
              f"{median(runs, 'p99_ms')} | {median(runs, 'server_cpu_us_per_update')} | "
              f"{sum(r['non_200'] for r in runs)} |")
    print(f"fake MAX CPU µs/update beside botflow: {median(ours, 'fake_max_cpu_us_per_update')}; "
          f"wrong replies (last round): {ours[-1]['wrong_replies']}")
    print(f"botflow / ceiling: {median(ours, 'updates_per_s') / median(ceiling, 'updates_per_s'):.0%}")
    print(json.dumps({"http": ours, "ceiling": ceiling}), file=sys.stderr)
