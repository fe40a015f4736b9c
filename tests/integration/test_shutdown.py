"""SIGTERM on a real `botflow serve`: stop accepting, finish the turn and its send, release locks, exit 0."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from server.channels.max.fake import FakeMax
from tests.integration.runtime_app import msg
from tests.processes import free_port, wait_answering

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "shutdown-test-admin-token"
TOKEN = "shutdown-bot-token"
SECRET = "shutdown_secret"


def start(tmp: Path, port: int, max_url: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update(PYTHONPATH=str(ROOT), BOTFLOW_MAX_API_URL=max_url, BOTFLOW_BOOTSTRAP_TOKEN=ADMIN,
               BOTFLOW_SECRET_KEY="shutdown-test-key", BOTFLOW_LOG_FORMAT="json", BOTFLOW_SHUTDOWN_TIMEOUT="15")
    server = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_answering(f"http://127.0.0.1:{port}/healthz", server, 60)
    return server


def api(base: str, method: str, path: str, body: Any) -> httpx.Response:
    return httpx.request(method, base + path, json=body, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=10)


def texts(fake: FakeMax, user: int) -> list[str]:
    return [m["text"] for m in fake.sent_messages(chat_id=user + 1_000_000)]


def test_sigterm_finishes_the_turn_in_flight_and_exits_0(tmp_path: Path) -> None:
    with FakeMax(tokens={TOKEN}) as fake:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start(tmp_path, port, fake.url)
        try:
            flow = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
            assert api(base, "POST", "/api/flows", flow).status_code == 201
            assert api(base, "POST", "/api/flows/registration/versions", {}).status_code == 201
            assert api(base, "POST", "/api/bots", {"id": "b", "title": "B", "token": TOKEN,
                                                    "webhook_secret": SECRET}).status_code == 201
            assert api(base, "POST", "/api/bots/b/publish", {"flow": "registration", "version": 1}).status_code == 200

            fake.delay_next(1, 3.0, "/messages")  # the reply is still on its way to MAX when SIGTERM comes
            answer: dict[str, Any] = {}

            def deliver() -> None:
                answer["response"] = httpx.post(f"{base}/webhooks/max/b", json=msg(5, "/start"), timeout=30,
                                                headers={"X-Max-Bot-Api-Secret": SECRET})

            sender = threading.Thread(target=deliver)
            sender.start()
            deadline = time.monotonic() + 20
            while any(f["kind"] == "delay" for f in fake._faults.once):  # taken when the call reaches the fake
                assert time.monotonic() < deadline, "the reply was never sent to MAX"
                time.sleep(0.02)
            assert not fake.sent_messages(), "the reply arrived before SIGTERM could catch it in flight"
            server.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            refused = False
            try:
                httpx.get(f"{base}/healthz", timeout=1)
            except httpx.HTTPError:
                refused = True
            sender.join(30)
            output, _ = server.communicate(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        assert server.returncode == 0, output
        assert refused, "the server still accepted new requests after SIGTERM"
        assert answer["response"].status_code == 200
        assert texts(fake, 5) == ["Привет! Как вас зовут?"]
        assert "stopped on SIGTERM" in output

        # A new process serves the same user at once: no lock was left behind.
        server = start(tmp_path, port, fake.url)
        try:
            started = time.monotonic()
            again = httpx.post(f"{base}/webhooks/max/b", json=msg(5, "Иван"), timeout=30,
                               headers={"X-Max-Bot-Api-Secret": SECRET})
            assert again.status_code == 200 and time.monotonic() - started < 5
            deadline = time.monotonic() + 10
            while len(texts(fake, 5)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert texts(fake, 5)[1:] == ["Введите телефон в формате +7XXXXXXXXXX"]
        finally:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=30)
        assert server.returncode == 0
