"""`in_daemon_thread` hands the function's result or its exception to the awaiting coroutine."""
import asyncio

import pytest

from server.preflight import in_daemon_thread


def _fail() -> None:
    raise ValueError("no database")


async def test_result_comes_back() -> None:
    assert await in_daemon_thread(lambda a, b: a + b, 2, 3) == 5


async def test_exception_comes_back_as_it_is() -> None:
    with pytest.raises(ValueError, match="no database"):
        await asyncio.wait_for(in_daemon_thread(_fail), 10)  # a lost exception would hang
