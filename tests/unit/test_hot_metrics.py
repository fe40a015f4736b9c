"""The lock-free hot-path metrics read exactly as prometheus_client's own would for the same counts."""
from __future__ import annotations

import random
import re

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from server import metrics
from server.hot_metrics import HotCounter, HotHistogram

BOUNDS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5)


def _text(registry: CollectorRegistry) -> str:
    # creation times differ between the two registries by construction; everything else must not
    return re.sub(r"_created(\{[^}]*\})? \S+", r"_created\1 T", generate_latest(registry).decode())


def test_the_exposition_is_the_librarys_for_the_same_observations() -> None:
    ours, theirs = CollectorRegistry(auto_describe=True), CollectorRegistry(auto_describe=True)
    doc = 'Turn time \\ with "quotes"\nand a newline'
    hot, lib = (HotHistogram("t_seconds", doc, ["kind", "outcome"], BOUNDS, registry=ours),
                Histogram("t_seconds", doc, ["kind", "outcome"], registry=theirs, buckets=BOUNDS))
    hot_count = HotCounter("r", "Replies", ["bot"], registry=ours)
    lib_count = Counter("r", "Replies", ["bot"], registry=theirs)
    rng = random.Random(7)
    for _ in range(3000):
        # bounds themselves, zero and values past the last bound are the edges a bucket search gets wrong
        value = rng.choice([rng.random() * 6, rng.choice(BOUNDS), 0.0, 100.0])
        labels = (rng.choice(["message", 'odd"\\\nlabel']), rng.choice(["moved", "ignored"]))
        hot.labels(*labels).observe(value)
        lib.labels(*labels).observe(value)
        hot_count.labels(bot=labels[0]).inc(2)
        lib_count.labels(bot=labels[0]).inc(2)
    assert _text(ours) == _text(theirs)
    assert "t_seconds_bucket" in _text(ours) and "r_total" in _text(ours)


def test_labels_by_name_or_position_are_one_child_and_wrong_labels_are_refused() -> None:
    counter = HotCounter("c", "doc", ["bot", "result"])
    assert counter.labels("b", "sent") is counter.labels(result="sent", bot="b")
    with pytest.raises(ValueError):
        counter.labels("b")
    with pytest.raises(ValueError):
        counter.labels("b", "sent").inc(-1)


def test_the_deployment_registry_shows_the_hot_metrics_by_their_documented_names() -> None:
    metrics.TURN_SECONDS.labels("message", "moved").observe(0.003)
    metrics.REPLIES.labels(bot="hot-metrics-test", result="sent").inc()
    assert metrics.REGISTRY.get_sample_value(
        "botflow_turn_seconds_bucket", {"kind": "message", "outcome": "moved", "le": "0.005"}) >= 1
    assert metrics.REGISTRY.get_sample_value(
        "botflow_replies_total", {"bot": "hot-metrics-test", "result": "sent"}) == 1
