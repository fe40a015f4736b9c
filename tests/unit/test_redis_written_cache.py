"""The Redis store's memory of its own last writes stays bounded and keeps the newest."""
from __future__ import annotations

import pytest

from server.runtime.stores import redis as redis_store
from server.runtime.stores.redis import RedisStore


def test_the_written_dialogs_stay_bounded_and_the_newest_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redis_store, "WRITTEN_MAX", 80)
    monkeypatch.setattr(redis_store, "DECODED_MAX", 16)
    store = RedisStore("redis://127.0.0.1:1/0")  # never connects: only its caches are used here
    for n in range(1000):
        store._remember(f"u{n}", b"raw%d" % n, {"n": n})
        store._remember("active", b"a%d" % n, {"a": n})  # one dialog in constant use is never forgotten
        assert len(store._written) <= 90 and len(store._decoded) <= 18
    assert store._written["active"] == b"a999" and store._decoded["active"] == {"a": 999}
    assert "u999" in store._written and "u999" in store._decoded
    assert "u0" not in store._written and "u900" not in store._decoded  # the oldest went first
    assert list(store._written)[-2:] == ["u999", "active"]
