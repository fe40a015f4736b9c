"""The production topology without Docker: 2 replicas behind nginx (deploy/nginx.conf), one PostgreSQL and
Redis, webhooks through the balancer, every user gets every reply in order."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from server.devtools.fake_max import FakeMax
from tests.integration.conftest import create_pg_database, drop_pg_database
from tests.integration.runtime_app import msg
from tests.processes import free_port, wait_answering

pytestmark = [pytest.mark.postgres, pytest.mark.redis]
ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
ADMIN = "balancer-test-admin-token"
TOKEN = "balancer-bot-token"
SECRET = "balancer_secret"
USERS = 24



def nginx_config(ports: list[int], listen: int) -> str:
    """deploy/nginx.conf with the replicas and the port of this machine, and which replica answered."""
    text = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    servers = "".join(f"        server 127.0.0.1:{port} max_fails=3 fail_timeout=10s;\n" for port in ports)
    text, upstreams = re.subn(r"^\s*server app:8000[^\n]*\n", servers, text, flags=re.M)
    text, listens = re.subn(r"listen 80;", f"listen 127.0.0.1:{listen};\n        add_header X-Upstream "
                            "$upstream_addr always;", text)
    assert upstreams == 1 and listens == 1, "deploy/nginx.conf no longer has the lines this test replaces"
    return text.replace("worker_processes auto;", "worker_processes 1;")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[str, FakeMax]]:
    if NGINX is None:
        pytest.fail("nginx is not installed (tests/run.sh installs it: apt-get install nginx-light)")
    database = create_pg_database("botflow_balancer")
    processes: list[subprocess.Popen[bytes]] = []
    env: dict[str, str] = {"BOTFLOW_REDIS_PREFIX": f"botflow_lb_{uuid.uuid4().hex[:8]}"}
    with FakeMax(tokens={TOKEN}) as fake:
        try:
            env.update({k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")})
            env.update(PYTHONPATH=str(ROOT), BOTFLOW_DATABASE_URL=database, BOTFLOW_MAX_API_URL=fake.url,
                       BOTFLOW_REDIS_URL="redis://127.0.0.1:6379/0", BOTFLOW_LOG_FORMAT="json",
                       BOTFLOW_BOOTSTRAP_TOKEN=ADMIN,
                       BOTFLOW_SECRET_KEY="balancer-test-key")
            ports = [free_port(), free_port()]
            for index, port in enumerate(ports):  # both start at once: migrations run once, behind the lock
                log = open(tmp_path / f"replica-{index}.log", "wb")
                processes.append(subprocess.Popen(
                    [sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=tmp_path, env=env,
                    stdout=log, stderr=subprocess.STDOUT))
            listen = free_port()
            (tmp_path / "nginx.conf").write_text(nginx_config(ports, listen), encoding="utf-8")
            processes.append(subprocess.Popen(
                [NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                 "-g", f"daemon off; pid {tmp_path / 'nginx.pid'}; error_log {tmp_path / 'nginx-error.log'};"],
                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
            for index, (port, process) in enumerate(zip(ports, processes)):
                wait_answering(f"http://127.0.0.1:{port}/readyz", process, 90, tmp_path / f"replica-{index}.log")
            wait_answering(f"http://127.0.0.1:{listen}/healthz", processes[-1], 90, tmp_path / "nginx-error.log")
            yield f"http://127.0.0.1:{listen}", fake
        finally:
            for process in reversed(processes):
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM if process.args[0] != NGINX else signal.SIGQUIT)
            for process in processes:
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            drop_pg_database(database)
            forget_keys(env["BOTFLOW_REDIS_PREFIX"])


def forget_keys(prefix: str) -> None:
    """Delete this test's keys from the shared Redis (only those under its own prefix)."""
    import redis

    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        for key in client.scan_iter(match=f"{prefix}:*", count=500):
            client.delete(key)
    finally:
        client.close()


def test_webhooks_through_nginx_reach_both_replicas_and_every_reply_arrives(stack: tuple[str, FakeMax]) -> None:
    base, fake = stack
    admin = {"Authorization": f"Bearer {ADMIN}"}
    with httpx.Client(base_url=base, headers=admin, timeout=30) as client:
        flow = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
        assert client.post("/api/flows", json=flow).status_code == 201
        assert client.post("/api/flows/registration/versions", json={}).status_code == 201
        assert client.post("/api/bots", json={"id": "lb", "title": "LB", "token": TOKEN,
                                              "webhook_secret": SECRET}).status_code == 201
        assert client.post("/api/bots/lb/publish", json={"flow": "registration", "version": 1}).status_code == 200
        assert client.get("/metrics").status_code == 404  # scraped per replica, not through the balancer

    def talk(user: int) -> list[tuple[int, str]]:
        answers = []
        with httpx.Client(base_url=base, timeout=30) as client:
            for text in ("/start", "Иван"):
                response = client.post("/webhooks/max/lb", json=msg(user, text),
                                       headers={"X-Max-Bot-Api-Secret": SECRET})
                answers.append((response.status_code, response.headers.get("x-upstream", "")))
        return answers

    with ThreadPoolExecutor(8) as pool:
        answers = [a for user_answers in pool.map(talk, range(1, USERS + 1)) for a in user_answers]
    assert [status for status, _ in answers] == [200] * (2 * USERS)
    assert len({upstream for _, upstream in answers}) == 2, "one replica served every webhook"

    expected = ["Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX"]

    def texts(user: int) -> list[str]:
        return [m["text"] for m in fake.sent_messages(chat_id=user + 1_000_000)]

    deadline = time.monotonic() + 20
    while any(len(texts(u)) < 2 for u in range(1, USERS + 1)) and time.monotonic() < deadline:
        time.sleep(0.1)
    wrong = {u: texts(u) for u in range(1, USERS + 1) if texts(u) != expected}
    assert not wrong, wrong
