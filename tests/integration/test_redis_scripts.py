"""The Redis store's Lua scripts as files: every one loads, and COMMIT reads its arguments by name and version."""
from __future__ import annotations

import msgspec
import pytest

from server.runtime.stores import commit_args, redis_scripts
from server.runtime.stores.resp import RedisError, RespClient, Script
from tests.integration.runtime_support import REDIS_URL, redis_prefix  # noqa: F401 (fixture)

pytestmark = pytest.mark.redis


def test_every_script_file_is_loaded_and_its_libraries_come_first() -> None:
    names = {path.stem for path in redis_scripts.HERE.glob("*.lua")} - {"funnel"}
    loaded = {name.lower() for name, value in vars(redis_scripts).items() if isinstance(value, Script)}
    assert loaded == names
    commit = redis_scripts.COMMIT.source
    assert commit.index("local function reserve") < commit.index("local function bump") < commit.index("cmsgpack")


async def test_every_script_compiles_in_redis() -> None:
    client = RespClient(REDIS_URL)
    try:
        for name, value in vars(redis_scripts).items():
            if isinstance(value, Script):
                assert await client.call("SCRIPT", "LOAD", value.source) == value.sha.encode(), name
    finally:
        await client.close()


async def test_commit_refuses_arguments_of_another_version(redis_prefix: str) -> None:
    client = RespClient(REDIS_URL)
    base = f"{redis_prefix}:u:"
    keys = [base + suffix for suffix in "ldtmwo"] + [f"{redis_prefix}:{n}" for n in range(8)]
    args = commit_args.CommitArgs(commit_args.VERSION + 1, "token", "bot|1", msgspec.Raw(b"\xa11"),
                                  msgspec.Raw(b"\xa11"), 10, 10, 10, ttl=60)
    try:
        await client.call("SET", keys[0], "token")
        with pytest.raises(RedisError, match=f"version {commit_args.VERSION + 1}, expected {commit_args.VERSION}"):
            await client.run(redis_scripts.COMMIT, keys, [commit_args.encode(args), b"dialog", b""])
        assert await client.call("GET", keys[1]) is None  # nothing was saved
        args.v = commit_args.VERSION
        assert await client.run(redis_scripts.COMMIT, keys, [commit_args.encode(args), b"dialog", b""]) == 1
        assert await client.call("GET", keys[1]) == b"dialog"
        assert await client.call("EXISTS", keys[0]) == 0  # the lock was let go
    finally:
        await client.call("DEL", *keys)
        await client.close()
