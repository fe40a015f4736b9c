"""Outages: PostgreSQL or Redis black-holed or refused; the probes and the API answer 503 quickly; start-up
waits."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from server.app import create_app
from server.db.migrate import upgrade_blocking
from server.metrics import REGISTRY
from server.settings import Settings
from tests.integration.conftest import create_pg_database, drop_pg_database, off_loop
from tests.fakemax import fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, registration, running, texts
from tests.integration.runtime_support import REDIS_URL, redis_prefix  # noqa: F401 (fixture)
from tests.outage_proxy import OutageProxy
from tests.processes import free_port, wait_answering

pytestmark = pytest.mark.postgres
ADMIN = "outage-test-admin-token"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pg_url() -> Iterator[str]:
    url = create_pg_database("botflow_outage")
    try:
        off_loop(upgrade_blocking, url)
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture
def proxy() -> Iterator[OutageProxy]:
    with OutageProxy(5432) as running:
        yield running


def through(url: str, proxy: OutageProxy) -> str:
    return url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")


@pytest.mark.parametrize("outage", ["blackhole", "closed"])
async def test_probes_and_api_answer_503_during_an_outage_and_recover(pg_url: str, proxy: OutageProxy,
                                                                       outage: str) -> None:
    app = create_app(Settings(database_url=through(pg_url, proxy), bootstrap_token=ADMIN,
                              secret_key="outage-test", db_timeout=1.0))
    headers = {"Authorization": f"Bearer {ADMIN}"}
    async with AsyncTestClient(app=app, timeout=30) as client:
        assert (await client.get("/api/flows", headers=headers)).status_code == 200
        assert (await client.get("/readyz")).status_code == 200

        proxy.set(outage)  # type: ignore[arg-type]
        started = time.monotonic()
        ready = await client.get("/readyz")
        assert time.monotonic() - started < 2.0
        assert ready.status_code == 503 and ready.json()["checks"]["database"] == "unavailable"

        started = time.monotonic()
        api = await client.get("/api/flows", headers=headers)
        assert time.monotonic() - started < 5.0
        assert api.status_code == 503, api.text
        body = api.json()
        assert body["error"] == "unavailable" and "database is not answering" in body["message"]
        assert (REGISTRY.get_sample_value("botflow_database_errors_total") or 0) > 0
        page = await client.get("/flows", headers={**headers, "Accept": "text/html"})
        assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
        assert "cannot reach its database" in page.text and "{" not in page.text.split("<main>")[1]

        proxy.set("forward")
        deadline = time.monotonic() + 15
        while (await client.get("/readyz")).status_code != 200:
            assert time.monotonic() < deadline, "the app did not recover after the database came back"
        assert (await client.get("/api/flows", headers=headers)).status_code == 200


def serve(port: int, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env["PYTHONPATH"] = str(ROOT)
    env["BOTFLOW_SECRET_KEY"] = "outage-test-key"  # a PostgreSQL server refuses to start without one
    env.update(extra)
    return env


def test_a_replica_started_while_postgres_is_down_waits_then_serves(pg_url: str, proxy: OutageProxy,
                                                                    tmp_path: Path) -> None:
    proxy.set("closed")
    port = free_port()
    server = serve(port, clean_env(BOTFLOW_DATABASE_URL=through(pg_url, proxy), BOTFLOW_START_TIMEOUT="60",
                                   BOTFLOW_LOG_FORMAT="text"), tmp_path)
    lines: list[str] = []
    try:
        assert server.stdout is not None
        for line in server.stdout:
            lines.append(line)
            if "waiting for the database" in line:
                break
        assert f"waiting for the database at 127.0.0.1:{proxy.port}" in lines[-1], lines
        assert server.poll() is None, "the replica exited instead of waiting"
        proxy.set("forward")
        wait_answering(f"http://127.0.0.1:{port}/readyz", server, 30)
    finally:
        server.terminate()
        server.wait(30)


def test_a_replica_gives_up_after_the_start_timeout_with_one_clear_line(pg_url: str, proxy: OutageProxy,
                                                                       tmp_path: Path) -> None:
    proxy.set("blackhole")
    server = serve(free_port(), clean_env(BOTFLOW_DATABASE_URL=through(pg_url, proxy), BOTFLOW_START_TIMEOUT="2",
                                          BOTFLOW_DB_TIMEOUT="0.5", BOTFLOW_LOG_FORMAT="text"), tmp_path)
    output, _ = server.communicate(timeout=60)
    assert server.returncode != 0
    assert f"the database at 127.0.0.1:{proxy.port}/" in output and "did not answer within 2 s" in output, output
    assert "BOTFLOW_START_TIMEOUT" in output
    # One line says it, not the framework's traceback of a failed start-up.
    assert "Traceback" not in output and "ExceptionGroup" not in output, output
    assert "BOTFLOW_DATABASE_URL" in output.strip().splitlines()[-1]


@pytest.mark.redis
@pytest.mark.parametrize("outage", ["blackhole", "closed"])
async def test_readyz_answers_503_quickly_when_redis_does_not_answer(pg_url: str, outage: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", f"botflow_outage_{uuid.uuid4().hex[:8]}")
    with OutageProxy(6379) as redis_proxy:
        app = create_app(Settings(database_url=pg_url, redis_url=f"redis://127.0.0.1:{redis_proxy.port}/0",
                                  secret_key="outage-test", db_timeout=1.0))
        async with AsyncTestClient(app=app, timeout=30) as client:
            assert (await client.get("/readyz")).status_code == 200
            redis_proxy.set(outage)  # type: ignore[arg-type]
            started = time.monotonic()
            ready = await client.get("/readyz")
            assert time.monotonic() - started < 2.0
            assert ready.status_code == 503
            assert ready.json()["checks"] == {"database": "ok", "redis": "unavailable"}
            redis_proxy.set("forward")


async def test_webhooks_go_on_from_the_last_bot_settings_while_postgres_is_down_right_after_a_publish(
        pg_url: str, proxy: OutageProxy, fake_max, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    """A publish drops every cached copy of the bot's settings; with the database gone a moment later,
    the webhooks are served from the last copy read, and /readyz keeps the replica in the webhooks'
    balance while it takes it out of the designer's."""
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(through(pg_url, proxy), fake_max.url, REDIS_URL) as h:
        await h.bot("pgdown")
        await h.publish("pgdown", registration())
        assert (await h.deliver("pgdown", msg(9101, "/start"))).status_code == 200
        await h.publish("pgdown", registration())  # invalidates the cached settings on this replica
        proxy.set("closed")
        answered = await h.deliver("pgdown", msg(9102, "/start"))
        assert answered.status_code == 200, answered.text
        assert (await h.deliver("pgdown", msg(9101, "Иван"))).status_code == 200
        await fake_max.wait_for(lambda f: texts(f, 9102) and len(texts(f, 9101)) == 2, timeout=10)
        ready = await h.client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["status"] == "degraded" and ready.json()["checks"]["database"] == "unavailable"
        assert ready.json()["serves"] == {"webhooks": True, "designer": False}
        assert (await h.client.get("/readyz", params={"for": "designer"})).status_code == 503
        refused = await h.client.get("/readyz", params={"for": "everything"})
        assert refused.status_code == 400 and "webhooks, designer" in refused.json()["message"]
        proxy.set("forward")
        deadline = time.monotonic() + 15
        while (await h.client.get("/readyz", params={"for": "designer"})).status_code != 200:
            assert time.monotonic() < deadline, "the designer did not come back with the database"
