"""Servers that tests run as child processes: a free port, waiting until one answers, stopping it."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_answering(url: str, process: subprocess.Popen, seconds: float = 60, log: Path | None = None) -> None:
    """Poll `url` until it answers 200; fail, with the end of `log`, if the process exits or time runs out."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        exited, late = process.poll() is not None, time.monotonic() > deadline
        if exited or late:
            tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
            problem = f"exited with {process.returncode}" if exited else f"gave no answer at {url} within {seconds:.0f} s"
            raise AssertionError(f"{process.args} {problem}\n{tail}")
        time.sleep(0.2)


def stop(process: subprocess.Popen, grace: float = 15) -> None:
    """SIGTERM, then SIGKILL if it is still running after `grace` seconds."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
