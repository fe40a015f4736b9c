"""The fake MAX as a process of its own, driven through its control routes (`/_fake/...`).

Its clock is the receiver's: MAX counts a bot's calls per second where it receives them. In a thread of
the suite's process it shared the interpreter with hundreds of players posting webhooks, so its receive
times also measured the suite's own load.
"""
from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import httpx

from tests.processes import free_port


class FakeMaxProcess:
    """`python -m server.channels.max.fake` on a free port, with the in-process fake's methods the suite uses."""

    def __init__(self, max_calls: int = 200_000) -> None:
        self.port = free_port()
        self.max_calls = max_calls
        self.proc: subprocess.Popen[bytes] | None = None
        self._http = httpx.Client(timeout=30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeMaxProcess:
        self.proc = subprocess.Popen([sys.executable, "-m", "server.channels.max.fake", "--port", str(self.port),
                                      "--max-calls", str(self.max_calls)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                if self._http.get(self.url + "/_fake/counts", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the fake MAX process did not start")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._http.close()

    def _post(self, route: str, body: dict[str, Any]) -> None:
        answer = self._http.post(f"{self.url}/_fake/{route}", json=body)
        if answer.status_code != 200:
            raise RuntimeError(f"fake MAX /_fake/{route}: {answer.status_code} {answer.text}")

    @property
    def calls(self) -> list[dict[str, Any]]:
        return self._http.get(self.url + "/_fake/calls").json()["calls"]

    def clear(self) -> None:
        self._post("reset", {})

    def set_slow(self, seconds: float, path: str | None = None) -> None:
        self._post("slow", {"seconds": seconds, "path": path})

    def set_down(self, down: bool, seconds: float | None = None, drop: bool = False) -> None:
        self._post("down", {"down": down, "seconds": seconds, "drop": drop})

    def delay_next(self, n: int, seconds: float, path: str | None = None) -> None:
        self._post("delay", {"n": n, "seconds": seconds, "path": path})

    def set_rate_limit(self, per_second: float | None, retry_after: float = 1.0) -> None:
        self._post("rate", {"per_second": per_second, "retry_after": retry_after})
