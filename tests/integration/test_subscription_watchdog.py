"""MAX keeps delivering: a deleted webhook subscription comes back by itself; health shows in metrics."""
from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from server.app import create_app
from server.db.models import BotRow
from server.metrics import REGISTRY
from server.settings import Settings
from tests.fakemax import FAKE_TOKEN, FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import SECRET, lifespan
from tests.integration.runtime_support import sqlite_url  # noqa: F401

PUBLIC = "https://bots.example.test"
BOT = "watched"
URL = f"{PUBLIC}/webhooks/max/{BOT}"


@pytest.fixture
async def app(fake_max: FakeMax, sqlite_url: str) -> AsyncIterator[object]:  # noqa: F811
    application = create_app(Settings(database_url=sqlite_url, max_api_url=fake_max.url, public_url=PUBLIC,
                                      subscription_check=0.2, secret_key="watchdog-test", max_rate=1000))
    async with lifespan(application):
        async with application.state.db.session() as session:
            session.add(BotRow(id=BOT, title=BOT, token=FAKE_TOKEN, webhook_secret=SECRET))
            await session.commit()
        yield application


def up() -> float | None:
    return REGISTRY.get_sample_value("botflow_subscription_up", {"bot": BOT})


def urls(fake: FakeMax) -> list[str]:
    return [s["url"] for s in fake.subscriptions(FAKE_TOKEN)]


async def test_a_deleted_subscription_comes_back_by_itself(app, fake_max: FakeMax) -> None:  # noqa: F811
    await fake_max.wait_for(lambda f: urls(f) == [URL])
    assert fake_max.subscriptions(FAKE_TOKEN)[0]["secret"] == SECRET
    await fake_max.wait_for(lambda f: up() == 1)

    async with httpx.AsyncClient(base_url=fake_max.url) as client:  # MAX drops it, as after 8 h of failures
        gone = await client.delete("/subscriptions", params={"url": URL}, headers={"Authorization": FAKE_TOKEN})
        assert gone.status_code == 200
    assert urls(fake_max) == []
    await fake_max.wait_for(lambda f: urls(f) == [URL], timeout=5)
    health = app.state.watchdog.health[BOT]
    assert health.up and health.resubscribed_at is not None and health.error is None


async def test_an_unreachable_max_shows_as_down(app, fake_max: FakeMax) -> None:  # noqa: F811
    await fake_max.wait_for(lambda f: up() == 1)
    fake_max.set_down(True)
    await fake_max.wait_for(lambda f: up() == 0, timeout=5)
    assert app.state.watchdog.health[BOT].error
    fake_max.set_down(False)
    await fake_max.wait_for(lambda f: up() == 1, timeout=5)


async def test_bot_added_without_a_user_is_accepted(app) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://botflow.test") as client:
        answer = await client.post(f"/webhooks/max/{BOT}", headers={"X-Max-Bot-Api-Secret": SECRET},
                                   json={"update_type": "bot_added", "timestamp": 1785182044286, "chat_id": 5})
    assert answer.status_code == 200


async def test_without_a_public_address_the_page_learns_when_max_no_longer_lists_the_webhook(
        fake_max: FakeMax, sqlite_url: str) -> None:  # noqa: F811
    elsewhere = f"https://tunnel.example/webhooks/max/{BOT}"
    application = create_app(Settings(database_url=sqlite_url, max_api_url=fake_max.url, subscription_check=0.2,
                                      secret_key="watchdog-test", max_rate=1000))
    async with lifespan(application):
        async with application.state.db.session() as session:
            session.add(BotRow(id=BOT, title=BOT, token=FAKE_TOKEN, webhook_secret=SECRET))
            await session.commit()
        async with httpx.AsyncClient(base_url=fake_max.url, headers={"Authorization": FAKE_TOKEN}) as client:
            subscribed = await client.post("/subscriptions", json={"url": elsewhere, "secret": SECRET})
            assert subscribed.status_code == 200
            watchdog = application.state.watchdog
            await fake_max.wait_for(lambda f: (h := watchdog.health.get(BOT)) is not None and h.up, timeout=5)
            assert watchdog.health[BOT].url == elsewhere
            await client.delete("/subscriptions", params={"url": elsewhere})
        await fake_max.wait_for(lambda f: watchdog.health[BOT].missing, timeout=5)
        assert urls(fake_max) == [], "without a public address nothing is subscribed behind the operator's back"


async def test_a_public_address_max_refuses_is_never_sent_and_is_said(fake_max: FakeMax,  # noqa: F811
                                                                       sqlite_url: str) -> None:  # noqa: F811
    application = create_app(Settings(database_url=sqlite_url, max_api_url=fake_max.url,
                                      public_url="http://203.0.113.9:8000", subscription_check=0.2,
                                      secret_key="watchdog-test", max_rate=1000))
    async with lifespan(application):
        async with application.state.db.session() as session:
            session.add(BotRow(id=BOT, title=BOT, token=FAKE_TOKEN, webhook_secret=SECRET))
            await session.commit()
        watchdog = application.state.watchdog
        await fake_max.wait_for(lambda f: (h := watchdog.health.get(BOT)) is not None and h.refused, timeout=5)
    assert fake_max.requests("POST", "/subscriptions") == []
    assert "port 443" in (watchdog.health[BOT].error or "")
