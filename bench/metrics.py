"""The hot-path metrics: prometheus_client's locked values beside `server.hot_metrics`, per call.

    python bench/metrics.py [--calls 500000]

A turn makes three such calls (its time, its send's time, the reply counted); the figures say what
they cost per turn with each, interleaved over five rounds so drift hits both alike (medians).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from prometheus_client import CollectorRegistry, Counter, Histogram  # noqa: E402

from server.hot_metrics import HotCounter, HotHistogram  # noqa: E402

BOUNDS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5)


def per_call(work: Callable[[float], None], calls: int) -> float:
    """Nanoseconds per call of `work`, over values spread across the buckets."""
    values = [(i % 97) / 1000 for i in range(1000)]
    started = time.perf_counter()
    for _ in range(calls // 1000):
        for value in values:
            work(value)
    return (time.perf_counter() - started) / calls * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=500_000)
    args = ap.parse_args()
    registry = CollectorRegistry()
    sides = {
        "prometheus_client": (Histogram("a_seconds", "a", ["k"], registry=registry, buckets=BOUNDS).labels("x"),
                              Counter("a", "a", ["k"], registry=registry).labels("x")),
        "hot_metrics": (HotHistogram("b_seconds", "b", ["k"], BOUNDS, registry=registry).labels("x"),
                        HotCounter("b", "b", ["k"], registry=registry).labels("x")),
    }
    runs: dict[str, dict[str, list[float]]] = {name: {"observe": [], "inc": []} for name in sides}
    for _ in range(5):
        for name, (histogram, counter) in sides.items():
            runs[name]["observe"].append(per_call(histogram.observe, args.calls))
            runs[name]["inc"].append(per_call(lambda _: counter.inc(), args.calls))
    print("| metrics | histogram observe ns | counter inc ns | per turn (2 observe + 1 inc) µs |")
    print("|---|---:|---:|---:|")
    turn = {}
    for name, found in runs.items():
        observe, inc = statistics.median(found["observe"]), statistics.median(found["inc"])
        turn[name] = (2 * observe + inc) / 1000
        print(f"| {name} | {observe:.0f} | {inc:.0f} | {turn[name]:.2f} |")
    print(f"prometheus_client costs {turn['prometheus_client'] / turn['hot_metrics']:.1f}x the time per turn "
          f"({turn['prometheus_client'] - turn['hot_metrics']:.2f} µs more)")


if __name__ == "__main__":
    main()
