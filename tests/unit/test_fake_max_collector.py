"""The fake MAX as a process of its own: no full collections while it answers, one at each reset."""
from __future__ import annotations

import gc

from server.channels.max.fake import quiet_collector
from server.channels.max.fake.app import FakeMaxApp


def full_collections() -> int:
    return gc.get_stats()[2]["collections"]


def test_a_reset_runs_a_full_collection_only_in_a_quiet_fake() -> None:
    threshold = gc.get_threshold()
    try:
        shared = FakeMaxApp()  # in a test's own process: its collector is left alone
        before = full_collections()
        shared.clear()
        assert full_collections() == before and gc.get_threshold() == threshold

        own = FakeMaxApp()
        quiet_collector(own)
        young, middle, old = gc.get_threshold()
        assert (young, middle) == threshold[:2] and old >= 10**9  # young collections still run
        before = full_collections()
        own.clear()
        assert full_collections() == before + 1
    finally:
        gc.set_threshold(*threshold)
