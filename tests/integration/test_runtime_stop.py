"""Stopping a replica: a part of the runtime that does not stop (a server that stopped answering) is
waited for a bounded time, logged, and left, so the process still exits and closes its database."""
from __future__ import annotations

import asyncio
import logging
import time
import uuid

import pytest
from litestar.testing import AsyncTestClient

from server.runtime import lifecycle

pytestmark = pytest.mark.redis


async def test_a_part_that_never_stops_delays_the_shutdown_only_briefly(
        make_app, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", f"botflow_stop_{uuid.uuid4().hex[:8]}")
    monkeypatch.setattr(lifecycle, "STOP_WITHIN", 0.5)
    app = make_app(redis_url="redis://127.0.0.1:6379/0")
    closed: list[str] = []

    async def never() -> None:
        await asyncio.Event().wait()

    async with AsyncTestClient(app=app, timeout=30) as client:
        assert (await client.get("/readyz")).status_code == 200
        runtime = app.state.runtime
        runtime.http.aclose = never  # the webhook actions' client hangs on close
        store_close = runtime.store.close

        async def close_store() -> None:
            await store_close()
            closed.append("store")

        runtime.store.close = close_store
        caplog.set_level(logging.WARNING, logger="botflow.runtime")
        started = time.monotonic()
    assert time.monotonic() - started < 5
    assert closed == ["store"]  # the parts after the stuck one were still stopped
    assert "the webhook actions' client did not stop within 0.5 s" in caplog.text
