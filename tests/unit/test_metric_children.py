"""Metric children looked up once: the same child per label values, counting into the metric itself."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from server.metrics import Children


def test_each_label_set_is_looked_up_once_and_counts_into_the_metric() -> None:
    registry = CollectorRegistry()
    counter = Counter("calls", "calls", ["bot", "result"], registry=registry)
    children = Children(counter)
    assert children("a", "sent") is children("a", "sent")
    assert children("a", "sent") is not children("a", "refused")
    children("a", "sent").inc()
    children("a", "sent").inc(2)
    children("b", "sent").inc()
    assert registry.get_sample_value("calls_total", {"bot": "a", "result": "sent"}) == 3
    assert registry.get_sample_value("calls_total", {"bot": "b", "result": "sent"}) == 1
    assert registry.get_sample_value("calls_total", {"bot": "a", "result": "refused"}) == 0
