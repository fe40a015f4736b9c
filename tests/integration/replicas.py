"""Two `botflow serve` processes on one database: requests sent to each run truly at the same moment."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import free_port, stop, wait_answering

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def replicas(database_url: str, workdir: Path, token: str, count: int = 2) -> Iterator[list[str]]:
    """Base URLs of `count` replicas with the bootstrap admin `token`; stopped on leaving."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update(PYTHONPATH=str(ROOT), BOTFLOW_DATABASE_URL=database_url, BOTFLOW_BOOTSTRAP_TOKEN=token,
               BOTFLOW_SECRET_KEY="replicas-secret-key", BOTFLOW_LOG_FORMAT="json")
    processes: list[subprocess.Popen] = []
    urls: list[str] = []
    try:
        for index in range(count):
            port = free_port()
            log = workdir / f"replica{index}.log"
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=workdir, env=env,
                stdout=log.open("w"), stderr=subprocess.STDOUT))
            urls.append(f"http://127.0.0.1:{port}")
            wait_answering(f"{urls[-1]}/readyz", processes[-1], 60, log)
        yield urls
    finally:
        for process in processes:
            stop(process)
