"""The production topology without Docker: 2 replicas behind Caddy (deploy/Caddyfile) on https with a
certificate from Caddy's own CA, one PostgreSQL and Redis, webhooks through the proxy, every user gets every
reply in order; assets come compressed, cached and revalidated through it."""
from __future__ import annotations

from urllib.parse import urlsplit

import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from server.channels.max.fake import FakeMax
from tests.integration.conftest import create_pg_database, drop_pg_database
from tests.integration.runtime_app import msg
from tests.processes import free_port, wait_answering

pytestmark = [pytest.mark.postgres, pytest.mark.redis]
ROOT = Path(__file__).resolve().parents[2]
CADDY = shutil.which("caddy")
ADMIN = "balancer-test-admin-token"
TOKEN = "balancer-bot-token"
SECRET = "balancer_secret"
USERS = 24


def caddy_config(ports: list[int], http_port: int) -> str:
    """deploy/Caddyfile with this machine's replicas, ports that need no root, no admin endpoint, the CA kept
    out of the system's trust store, and which replica answered."""
    text = (ROOT / "deploy" / "Caddyfile").read_text(encoding="utf-8")
    upstreams = " ".join(f"127.0.0.1:{port}" for port in ports)
    text, replaced = re.subn(r"dynamic a app 8000 \{[^}]*\}",
                             f"to {upstreams}\n\t\theader_down X-Upstream {{http.reverse_proxy.upstream.hostport}}",
                             text)
    options = f"admin off\n\tskip_install_trust\n\thttp_port {http_port}\n\tlocal_certs"
    text, optioned = re.subn(r"^\t\{\$BOTFLOW_CADDY_OPTIONS\}$", "\t" + options, text, flags=re.M)
    assert replaced == 1 and optioned == 1, "deploy/Caddyfile no longer has the lines this test replaces"
    return text


@dataclass
class Stack:
    base: str  # https://localhost:<port>
    http_base: str  # the port-80 stand-in that redirects to https
    fake: FakeMax
    ca: Path  # Caddy's root certificate

    def client(self, **kwargs: object) -> httpx.Client:
        """A client that trusts Caddy's CA and nothing else."""
        return httpx.Client(base_url=self.base, verify=ssl.create_default_context(cafile=str(self.ca)),
                            timeout=30, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")  # one stack for the module: two replicas take most of half a minute to start
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp_path = tmp_path_factory.mktemp("balancer")
    if CADDY is None:
        pytest.fail("caddy is not installed (tests/run.sh installs it: apt-get install caddy)")
    database = create_pg_database("botflow_balancer")
    processes: list[subprocess.Popen[bytes]] = []
    env: dict[str, str] = {"BOTFLOW_REDIS_PREFIX": f"botflow_lb_{uuid.uuid4().hex[:8]}"}
    listen, http_port = free_port(), free_port()
    domain = f"localhost:{listen}"
    with FakeMax(tokens={TOKEN}) as fake:
        try:
            env.update({k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")})
            env.update(PYTHONPATH=str(ROOT), BOTFLOW_DATABASE_URL=database, BOTFLOW_MAX_API_URL=fake.url,
                       BOTFLOW_REDIS_URL="redis://127.0.0.1:6379/0", BOTFLOW_LOG_FORMAT="json",
                       BOTFLOW_BOOTSTRAP_TOKEN=ADMIN, BOTFLOW_SECRET_KEY="balancer-test-key",
                       BOTFLOW_PUBLIC_URL=f"https://{domain}")  # as docker-compose.yml derives it
            ports = [free_port(), free_port()]
            for index, port in enumerate(ports):  # both start at once: migrations run once, behind the lock
                log = open(tmp_path / f"replica-{index}.log", "wb")
                processes.append(subprocess.Popen(
                    [sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=tmp_path, env=env,
                    stdout=log, stderr=subprocess.STDOUT))
            (tmp_path / "Caddyfile").write_text(caddy_config(ports, http_port), encoding="utf-8")
            caddy_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "BOTFLOW_DOMAIN": domain,
                         "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
            caddy_log = open(tmp_path / "caddy.log", "wb")
            processes.append(subprocess.Popen(
                [CADDY, "run", "--config", str(tmp_path / "Caddyfile"), "--adapter", "caddyfile"],
                env=caddy_env, cwd=tmp_path, stdout=caddy_log, stderr=subprocess.STDOUT))
            for index, (port, process) in enumerate(zip(ports, processes)):
                wait_answering(f"http://127.0.0.1:{port}/readyz", process, 90, tmp_path / f"replica-{index}.log")
            ca = tmp_path / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
            deadline = time.monotonic() + 30
            while not ca.exists():
                assert processes[-1].poll() is None and time.monotonic() < deadline, \
                    (tmp_path / "caddy.log").read_text(errors="replace")[-3000:]
                time.sleep(0.1)
            ready = Stack(f"https://{domain}", f"http://localhost:{http_port}", fake, ca)
            deadline = time.monotonic() + 30
            while True:
                try:
                    with ready.client() as client:
                        if client.get("/healthz").status_code == 200:
                            break
                except httpx.HTTPError:
                    pass
                assert processes[-1].poll() is None and time.monotonic() < deadline, \
                    (tmp_path / "caddy.log").read_text(errors="replace")[-3000:]
                time.sleep(0.2)
            yield ready
        finally:
            for process in reversed(processes):
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
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


def test_webhooks_through_caddy_reach_both_replicas_and_every_reply_arrives(stack: Stack) -> None:
    fake = stack.fake
    admin = {"Authorization": f"Bearer {ADMIN}"}
    with stack.client(headers=admin) as client:
        flow = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
        assert client.post("/api/flows", json=flow).status_code == 201
        assert client.post("/api/flows/registration/versions", json={}).status_code == 201
        assert client.post("/api/bots", json={"id": "lb", "title": "LB", "token": TOKEN,
                                              "webhook_secret": SECRET}).status_code == 201
        assert client.post("/api/bots/lb/publish", json={"flow": "registration", "version": 1}).status_code == 200
        assert client.get("/metrics").status_code == 404  # scraped per replica, not through the balancer
    # The domain the proxy serves is the one the bot was subscribed with (BOTFLOW_PUBLIC_URL follows it).
    subscribed = [call["json"]["url"] for call in fake.requests("POST", "/subscriptions", TOKEN)]
    # The test's Caddy listens on a free port, not 443: MAX would refuse that address, so none is subscribed.
    assert subscribed == [] and urlsplit(stack.base).port != 443

    def talk(user: int) -> list[tuple[int, str]]:
        answers = []
        with stack.client() as client:
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


def test_plain_http_is_sent_to_https(stack: Stack) -> None:
    answer = httpx.get(stack.http_base + "/flows", follow_redirects=False, timeout=10)
    assert answer.status_code in (301, 308)
    assert answer.headers["location"].startswith("https://localhost")


def test_assets_through_caddy_come_compressed_cached_and_revalidated(stack: Stack) -> None:
    with stack.client() as client:
        page = client.get("/login")
        assert page.status_code == 200 and "strict-transport-security" in page.headers
        css = re.search(r'href="(/static/v/[0-9a-f]+/css/app\.css)"', page.text)
        assert css, "the login page names no versioned stylesheet"
        raw = (ROOT / "static" / "css" / "app.css").read_bytes()
        for url, cache in ((css.group(1), "public, max-age=31536000, immutable"), ("/static/css/app.css", "public, no-cache")):
            for encoding in ("zstd", "gzip"):
                answer = client.get(url, headers={"Accept-Encoding": encoding})
                assert answer.status_code == 200 and answer.headers["content-encoding"] == encoding, (url, encoding)
                assert answer.headers["cache-control"] == cache, url
                assert answer.num_bytes_downloaded < len(raw) / 2, (url, encoding)  # as it came over the wire
                if encoding == "gzip":  # httpx decodes it (zstd only with the zstandard package)
                    assert answer.content == raw, url
                again = client.get(url, headers={"Accept-Encoding": encoding, "If-None-Match": answer.headers["etag"]})
                assert again.status_code == 304 and again.content == b"", (url, encoding, again.headers)
                dated = client.get(url, headers={"If-Modified-Since": answer.headers["last-modified"]})
                assert dated.status_code == 304, url
