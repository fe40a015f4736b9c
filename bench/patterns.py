"""Worst-case document patterns on a 4,000-character message: RE2 time per match (goal under 5 ms)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.patterns import compile_pattern  # noqa: E402

GOAL_MS = 5.0
CASES = [(r"^(a+)+$", "a" * 3999 + "!"), (r"^(a|aa)+$", "a" * 3999 + "!"), (r"(\w+\s?)+$", "слово " * 666 + "!"),
         (r"^(([a-z])+.)+[A-Z]([a-z])+$", "a" * 3999 + "!"), (r"(.*a){20}", "a" * 4000)]


def main() -> None:
    """Print the slowest of 20 runs of each pattern against the goal."""
    for pattern, text in CASES:
        compiled = compile_pattern(pattern)
        assert compiled is not None, pattern
        worst = 0.0
        for _ in range(20):
            started = time.perf_counter()
            compiled.search(text)
            worst = max(worst, time.perf_counter() - started)
        print(f"{pattern!r:36} on {len(text)} chars: worst {worst * 1000:.3f} ms (goal {GOAL_MS} ms)")


if __name__ == "__main__":
    main()
