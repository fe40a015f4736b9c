"""Benchmarks that no other test runs cannot break unnoticed: the modules they start exist, and the replay
benchmark runs end to end on a small input against the real Redis."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_module_a_benchmark_starts_can_be_found() -> None:
    started = {name for path in (ROOT / "bench").glob("*.py")
               for name in re.findall(r'"-m", "([A-Za-z_.]+)"', path.read_text(encoding="utf-8"))}
    assert "server.channels.max.fake" in started, started  # the pattern still matches how benches start things
    missing = sorted(name for name in started if importlib.util.find_spec(name) is None)
    assert not missing, f"bench/ starts modules that do not exist: {missing}"


@pytest.mark.redis
def test_the_replay_benchmark_accounts_for_every_dialog_from_redis() -> None:
    run = subprocess.run([sys.executable, "bench/testing.py", "--dialogs", "300", "--redis",
                          "redis://127.0.0.1:6379/0"], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    in_memory = re.search(r"replay of (\d+) recorded dialogs .*?\n\s+(\d+) differ, (\d+) same", run.stdout)
    from_redis = re.search(r"the same (\d+) dialogs from Redis .*?: (\d+) differ", run.stdout)
    assert in_memory and from_redis, run.stdout
    assert int(in_memory[1]) == int(from_redis[1]) == 300
    assert int(in_memory[2]) + int(in_memory[3]) == 300
    assert int(from_redis[2]) == int(in_memory[2])  # the same verdicts whichever store the dialogs come from
