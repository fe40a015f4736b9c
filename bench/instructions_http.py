"""Instructions per webhook update of `botflow serve`, counted by callgrind while the load runs.

The server runs under `valgrind --tool=callgrind --instr-atstart=no` beside the fake MAX; after start-up
and a warm-up of 200 users, counting is switched on for U users playing registration-5 over HTTP
(at most 64 in flight, as `runtime.py --http` sends them) and off again once the timeline mover has taken
their records. Everything the server process does in that window counts: uvicorn, the turn, the reply's
HTTP call, the timeline mover's thread. Kernel time does not.
"""
from __future__ import annotations

import asyncio
import glob
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def webhook_instructions(users: int, redis_url: str) -> tuple[int, int]:
    """(instructions counted, updates) for `users` users over HTTP."""
    import runtime_http as rh

    fake_port, app_port = rh.free_port(), rh.free_port()
    prefix = f"bench:cg:{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix="botflow-cg-")
    out = f"{tmp}/callgrind.out"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "server.channels.max.fake", "--port", str(fake_port)],
                                      cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        env = rh.server_env(tmp, redis_url, prefix, fake_port)
        server = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable,
             "-m", "server.cli", "serve", "--port", str(app_port)],
            cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        rh.wait_ready(f"http://127.0.0.1:{fake_port}/_fake/calls")
        rh.wait_ready(f"http://127.0.0.1:{app_port}/readyz", 600)
        rh.publish_bench_bot(app_port)
        warm = [9_000_000 + i for i in range(200)]
        asyncio.run(rh.drive(app_port, rh.workload_items(app_port, warm, 50_000_000), 64))
        time.sleep(1)
        control = ["callgrind_control", "-i"]
        subprocess.run([*control, "on", str(server.pid)], check=True, capture_output=True)
        result = asyncio.run(rh.drive(app_port, rh.workload_items(app_port, [1_000_000 + i for i in range(users)],
                                                                  10_000_000), 64))
        time.sleep(1.5)  # the timeline mover takes these updates' records (every 0.5 s)
        subprocess.run([*control, "off", str(server.pid)], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "--dump", str(server.pid)], check=True, capture_output=True)
        if result["non_200"]:
            raise SystemExit(f"{result['non_200']} webhooks were not answered 200")
        counted = 0
        for path in glob.glob(out + "*"):
            for line in Path(path).read_text(errors="replace").splitlines():
                if line.startswith(("summary:", "totals:")):
                    counted = max(counted, int(line.split()[1]))
        return counted, result["updates"]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(60)
        rh.delete_prefix(redis_url, prefix)
