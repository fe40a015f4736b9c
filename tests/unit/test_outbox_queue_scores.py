"""The Redis outbox queue's whole-second scores: claims never outlast their lease, retries never come early."""
from __future__ import annotations

import pytest

from server.runtime.stores.redis_outbox import lease_end, retry_at


# Integer text, which Redis keeps in the queue as an integer (no strtod on every insert).
@pytest.mark.parametrize("at, end, retry", [
    (1796294814.0, b"1796294814", b"1796294814"),
    (1796294814.001, b"1796294814", b"1796294815"),
    (1796294814.999, b"1796294814", b"1796294815"),
])
def test_scores_round_towards_safety(at: float, end: bytes, retry: bytes) -> None:
    assert lease_end(at) == end  # a lapsed claim is taken over no later than its lease says
    assert retry_at(at) == retry  # a retry (a Retry-After) is never sent before its time

