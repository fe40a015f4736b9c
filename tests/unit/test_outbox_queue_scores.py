"""The Redis outbox queue's whole-second scores: claims never outlast their lease, retries never come early."""
from __future__ import annotations

import pytest

from server.runtime.stores.redis_outbox import lease_end, retry_at


@pytest.mark.parametrize("at, end, retry", [
    (1796294814.0, b"1796294814", b"1796294814"),
    (1796294814.001, b"1796294814", b"1796294815"),
    (1796294814.999, b"1796294814", b"1796294815"),
])
def test_scores_round_towards_safety(at: float, end: bytes, retry: bytes) -> None:
    assert lease_end(at) == end  # a lapsed claim is taken over no later than its lease says
    assert retry_at(at) == retry  # a retry (a Retry-After) is never sent before its time


def test_scores_are_integers_redis_keeps_as_such() -> None:
    # listpack stores a score written as an integer as an integer: no strtod on every insert
    assert all(ch in b"0123456789" for ch in lease_end(1796294814.5) + retry_at(1796294814.5))
