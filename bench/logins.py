"""Login timing on a real server: a known and an unknown username answer alike, and logins do not stall
the event loop (password hashing runs in threads of its own).

python bench/logins.py   (uvicorn on a temporary SQLite file; prints the figures; takes seconds)
"""
from __future__ import annotations

import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-" + secrets.token_hex(8)
PASSWORD = "correct horse battery"
ROUNDS = 4  # wrong passwords per kind; together they stay under the login limit of 10 per client


def start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    folder = Path(tempfile.mkdtemp())
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update({"BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'bench.db'}",
                "BOTFLOW_BOOTSTRAP_TOKEN": TOKEN, "BOTFLOW_SECRET_KEY": "bench-secret"})
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "server.app:create_app", "--host",
                             "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


async def timed_login(url: str, username: str, password: str) -> tuple[float, int]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        await client.get("/login")
        started = time.perf_counter()
        answer = await client.post("/login", data={"username": username, "password": password,
                                                   "_csrf_token": client.cookies.get("csrftoken")})
        return (time.perf_counter() - started) * 1000, answer.status_code


def line(name: str, samples: list[tuple[float, int]]) -> str:
    times = [ms for ms, _ in samples]
    return (f"{name:28s} median {statistics.median(times):7.1f} ms  (min {min(times):.1f}, max {max(times):.1f}, "
            f"n={len(times)})")


async def main(url: str) -> None:
    created = httpx.post(url + "/api/users", json={"username": "known", "role": "viewer", "password": PASSWORD},
                         headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    assert created.status_code == 201, created.text
    await timed_login(url, "known", PASSWORD)  # warm-up
    known, unknown, right = [], [], []
    for _ in range(ROUNDS):
        known.append(await timed_login(url, "known", "wrong password"))
        unknown.append(await timed_login(url, "nobody-here", "wrong password"))
        right.append(await timed_login(url, "known", PASSWORD))
    assert {s for _, s in known + unknown} == {401} and {s for _, s in right} == {303}, (known, unknown, right)
    print(line("known user, wrong password", known))
    print(line("unknown user", unknown))
    print(line("known user, right password", right))

    async def health(stop: asyncio.Event) -> list[float]:
        found = []
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            while not stop.is_set():
                started = time.perf_counter()
                await client.get("/healthz")
                found.append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(0.01)
        return found

    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        idle = []
        for _ in range(20):
            started = time.perf_counter()
            await client.get("/healthz")
            idle.append((time.perf_counter() - started) * 1000)
    stop = asyncio.Event()
    probe = asyncio.create_task(health(stop))
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    await asyncio.gather(*(timed_login(url, "known", PASSWORD) for _ in range(6)))
    busy = (time.perf_counter() - started) * 1000
    stop.set()
    during = await probe
    print(f"/healthz idle: median {statistics.median(idle):.1f} ms; during 6 concurrent logins ({busy:.0f} ms): "
          f"median {statistics.median(during):.1f} ms, max {max(during):.1f} ms over {len(during)} requests")


if __name__ == "__main__":
    server, address = start_server()
    try:
        asyncio.run(main(address))
    finally:
        server.terminate()
        server.wait(timeout=15)
