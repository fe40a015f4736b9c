"""Pytest helpers for the fake MAX Bot API: `from tests.fakemax import FakeMax, fake_max, FAKE_TOKEN`."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from server.channels.max.fake import FakeMax

__all__ = ["FAKE_TOKEN", "FakeMax", "fake_max", "fake_max_server"]

# The bot token the shared fake accepts; give it to the bot you create in a test.
FAKE_TOKEN = "fake-max-test-token"


@pytest.fixture(scope="session")
def fake_max_server() -> Iterator[FakeMax]:
    """One fake MAX server for the whole test session (accepts FAKE_TOKEN)."""
    with FakeMax(tokens={FAKE_TOKEN}) as fake:
        yield fake


@pytest.fixture
def fake_max(fake_max_server: FakeMax) -> Iterator[FakeMax]:
    """The session's fake MAX server, emptied before and after each test (calls, failures, updates)."""
    fake_max_server.clear()
    yield fake_max_server
    fake_max_server.clear()
