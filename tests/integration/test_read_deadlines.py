"""Half-sent requests do not stay open, and one process keeps a bounded number of connections open."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import free_port, stop, wait_answering

ROOT = Path(__file__).resolve().parents[2]
CAP = 6


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("deadlines")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update(PYTHONPATH=str(ROOT), BOTFLOW_MAX_CONNECTIONS=str(CAP), BOTFLOW_LOG_FORMAT="json")
    port = free_port()
    log = workdir / "server.log"
    process = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=workdir,
                               env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        wait_answering(f"http://127.0.0.1:{port}/healthz", process, 60, log)
        yield port
    finally:
        stop(process)


def read_all(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(seconds)
    chunks = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def test_a_request_whose_headers_never_end_is_answered_408_and_closed(server):
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        answer = read_all(sock, 40)  # without a deadline this would wait forever (the recv times out: a failure)
    assert answer.startswith(b"HTTP/1.1 408") and b"request_timeout" in answer, answer
    assert time.monotonic() - started < 40


def test_connections_past_the_cap_are_refused_with_503(server):
    idle = [socket.create_connection(("127.0.0.1", server)) for _ in range(CAP)]
    try:
        time.sleep(0.5)  # the server has taken them all
        with socket.create_connection(("127.0.0.1", server)) as extra:
            answer = read_all(extra, 10)  # answered as it connects, before it sends anything
        assert answer.startswith(b"HTTP/1.1 503") and b"unavailable" in answer, answer
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.5)
    with socket.create_connection(("127.0.0.1", server)) as again:
        again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert read_all(again, 10).startswith(b"HTTP/1.1 200")
