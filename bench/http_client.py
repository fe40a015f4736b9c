"""CPU per MAX send of the runtime's HTTP client next to httpx (and aiohttp, where installed).

    python bench/http_client.py [--calls 20000] [--concurrency 64] [--rounds 3]

Each client posts the same message to the fake MAX (its own process) `--calls` times, at most
`--concurrency` at once, over kept-alive connections, as the outbox does. The figure is this process's
CPU time per call (user + system), the median of interleaved rounds; the fake's CPU is not counted.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Awaitable, Callable

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOKEN = "bench-token"
BODY = msgspec.json.encode({"text": "Спасибо! Как вас зовут?", "format": None})
HEADERS = {"Authorization": TOKEN, "Content-Type": "application/json; charset=utf-8", "Accept": "application/json"}


def lean(url: str) -> tuple[Callable[[int], Awaitable[int]], Callable[[], Awaitable[None]]]:
    from server.channels.transport import LeanClient

    client = LeanClient(timeout=30)

    async def call(chat: int) -> int:
        answer = await client.request("POST", url + "/messages", params={"chat_id": chat}, content=BODY,
                                      headers=HEADERS)
        answer.json()
        return answer.status_code

    return call, client.aclose


def with_httpx(url: str) -> tuple[Callable[[int], Awaitable[int]], Callable[[], Awaitable[None]]]:
    import httpx

    client = httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=100, max_keepalive_connections=100))

    async def call(chat: int) -> int:
        answer = await client.post(url + "/messages", params={"chat_id": chat}, content=BODY, headers=HEADERS)
        answer.json()
        return answer.status_code

    return call, client.aclose


def with_aiohttp(url: str) -> tuple[Callable[[int], Awaitable[int]], Callable[[], Awaitable[None]]]:
    import aiohttp

    session: list[Any] = []

    async def call(chat: int) -> int:
        if not session:
            session.append(aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)))
        async with session[0].post(url + "/messages", params={"chat_id": chat}, data=BODY,
                                   headers=HEADERS) as answer:
            await answer.json()
            return answer.status

    async def close() -> None:
        if session:
            await session[0].close()

    return call, close


# name -> (the library it needs, its factory)
CLIENTS = {"botflow (transport.py)": ("httptools", lean), "httpx": ("httpx", with_httpx),
           "aiohttp": ("aiohttp", with_aiohttp)}


async def run(make: Callable[..., Any], url: str, calls: int, concurrency: int) -> dict[str, float]:
    call, close = make(url)
    gate = asyncio.Semaphore(concurrency)
    failures = 0

    async def one(n: int) -> None:
        nonlocal failures
        async with gate:
            failures += await call(n % 5000 + 1) != 200

    await asyncio.gather(*(one(n) for n in range(min(calls, 500))))  # warm-up: connections, caches
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(calls)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await close()
    return {"cpu_us": 1e6 * cpu / calls, "per_s": calls / wall, "failures": failures}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import importlib.util
    import socket

    available = {}
    for name, (module, make) in CLIENTS.items():
        if importlib.util.find_spec(module) is None:
            print(f"{name}: {module} is not installed, skipped")
        else:
            available[name] = make

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    fake = subprocess.Popen([sys.executable, "-m", "server.channels.max.fake", "--port", str(port), "--max-calls", "100"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/_fake/counts", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in available}
        for _ in range(args.rounds):  # interleaved, so a machine that slows down midway slows all alike
            for name, make in available.items():
                results[name].append(asyncio.run(run(make, url, args.calls, args.concurrency)))
    finally:
        fake.terminate()
        fake.wait(10)
    print(f"\nPOST /messages to the fake MAX, {args.calls} calls, {args.concurrency} at once, "
          f"{args.rounds} interleaved rounds, medians\n")
    print("| client | CPU µs per call | calls/s | failed |")
    print("|---|---:|---:|---:|")
    ours = None
    for name, runs in results.items():
        cpu = statistics.median(r["cpu_us"] for r in runs)
        ours = ours or cpu
        print(f"| {name} | {cpu:.0f} ({cpu / ours:.1f}x) | {statistics.median(r['per_s'] for r in runs):.0f} | "
              f"{sum(r['failures'] for r in runs):.0f} |")
    return 0 if all(r["failures"] == 0 for runs in results.values() for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
