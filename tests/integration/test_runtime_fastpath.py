"""The plain-ASGI webhook path answers exactly as the Litestar route does, and leaves the rest to Litestar."""
from __future__ import annotations

from typing import Any

import pytest

from server import metrics
from server.runtime.fastpath import FastWebhooks
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import SECRET, Harness, msg, registration, running, texts
from tests.integration.runtime_support import sqlite_url  # noqa: F401

BOT = "fastbot"


@pytest.fixture
async def harness(fake_max: FakeMax, sqlite_url: str) -> Harness:  # noqa: F811
    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        yield h


def cases() -> list[tuple[str, dict[str, Any]]]:
    """(path, httpx request arguments) for every kind of answer the webhook gives."""
    ok = {"X-Max-Bot-Api-Secret": SECRET}
    return [
        (f"/webhooks/max/{BOT}", {"json": msg(1, "x"), "headers": {"X-Max-Bot-Api-Secret": "wrong"}}),
        (f"/webhooks/max/{BOT}", {"json": msg(1, "x")}),
        ("/webhooks/max/nobody", {"json": msg(1, "x"), "headers": ok}),
        (f"/webhooks/max/{BOT}", {"content": b"{not json", "headers": ok}),
        (f"/webhooks/max/{BOT}", {"json": {"update_type": "message_created"}, "headers": ok}),
        (f"/webhooks/max/{BOT}", {"json": {"update_type": "message_removed", "timestamp": 1}, "headers": ok}),
        (f"/webhooks/max/{BOT}/extra", {"json": msg(1, "x"), "headers": ok}),
        (f"/webhooks/max/{BOT}", {"content": b" " * (1024 * 1024 + 1), "headers": ok}),
    ]


async def test_answers_match_the_litestar_route(harness: Harness) -> None:
    fast = harness.app.asgi_handler
    assert isinstance(fast, FastWebhooks)
    answers = []
    for handler in (fast, fast.inner):
        harness.app.asgi_handler = handler
        for path, kwargs in cases():
            response = await harness.client.post(path, **kwargs)
            answers.append((path, response.status_code, response.headers.get("content-type"), response.json()))
    harness.app.asgi_handler = fast
    half = len(answers) // 2
    assert answers[:half] == answers[half:]
    assert [status for _, status, _, _ in answers[:half]] == [403, 403, 404, 400, 200, 200, 404, 413]


async def test_a_body_over_the_limit_is_counted_as_a_413_not_a_server_error(harness: Harness) -> None:
    def counted(status: str) -> float:
        return metrics.REGISTRY.get_sample_value("botflow_webhook_requests_total",
                                                 {"bot": "-", "status": status}) or 0.0

    before = counted("413"), counted("500")
    path, kwargs = cases()[-1]
    assert (await harness.client.post(path, **kwargs)).status_code == 413
    assert (counted("413"), counted("500")) == (before[0] + 1, before[1])


async def test_dialogs_run_through_the_fast_path(harness: Harness, fake_max: FakeMax) -> None:  # noqa: F811
    assert isinstance(harness.app.asgi_handler, FastWebhooks)
    for text in ("/start", "Иван"):
        response = await harness.deliver(BOT, msg(4242, text))
        assert (response.status_code, response.content) == (200, b'{"ok":true}')
    assert texts(fake_max, 4242) == ["Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX"]
    # Other methods and routes still go through Litestar.
    assert (await harness.client.get(f"/webhooks/max/{BOT}")).status_code == 405
    assert (await harness.api("GET", f"/api/bots/{BOT}/users/4242/session")).json()["state"] == "ask_phone"
