"""GET /metrics: Prometheus text from the shared registry, the optional token, sampled dialogs, webhooks."""
from __future__ import annotations

import asyncio

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from server.app import create_app
from server.settings import Settings
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, lifespan, msg, registration, running, texts
from tests.integration.runtime_support import sqlite_url  # noqa: F401

BOT = "metricsbot"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape by (name, sorted labels)."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


@pytest.fixture
async def harness(fake_max: FakeMax, sqlite_url: str) -> Harness:  # noqa: F811
    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        yield h


async def test_scrape_is_prometheus_text_with_build_info(harness: Harness) -> None:
    response = await harness.client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    found = samples(response.text)
    build = [labels for (name, labels) in found if name == "botflow_build_info"]
    assert build and dict(build[0])["version"] == "0.1.0"
    assert any(name == "botflow_database_errors_total" for name, _ in found)


async def test_running_dialogs_are_sampled_per_bot_and_version(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    for user in (1, 2, 3):
        assert (await harness.deliver(BOT, msg(user, "/start"))).status_code == 200
    await fake_max.wait_for(lambda f: all(texts(f, u) for u in (1, 2, 3)))
    found = samples((await harness.client.get("/metrics")).text)
    assert found[("botflow_dialogs", (("bot", BOT), ("version", "1")))] == 3
    for _ in range(100):  # sent replies leave the queue with the next batched acknowledgement
        if found[("botflow_outbox_depth", ())] == 0:
            break
        await asyncio.sleep(0.05)
        found = samples((await harness.client.get("/metrics")).text)
    assert found[("botflow_outbox_depth", ())] == 0


async def test_a_webhook_on_the_fast_path_is_counted(harness: Harness) -> None:
    before = samples((await harness.client.get("/metrics")).text)
    key = ("botflow_webhook_requests_total", (("bot", BOT), ("status", "200")))
    assert (await harness.deliver(BOT, msg(77, "/start"))).status_code == 200
    after = samples((await harness.client.get("/metrics")).text)
    assert after.get(key, 0) == before.get(key, 0) + 1


async def test_the_metrics_token_is_required_when_set(sqlite_url: str) -> None:  # noqa: F811
    app = create_app(Settings(database_url=sqlite_url, metrics_token="scrape-me-0123456789",
                              secret_key="metrics-test"))
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://botflow.test") as client:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic scrape-me-0123456789"}):
                refused = await client.get("/metrics", headers=headers)
                assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
                assert "scrape-me" not in refused.text
            ok = await client.get("/metrics", headers={"Authorization": "Bearer scrape-me-0123456789"})
            assert ok.status_code == 200 and "botflow_build_info" in ok.text
