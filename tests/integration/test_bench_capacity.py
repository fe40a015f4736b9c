"""A tiny run of bench/capacity.py, so the capacity page's command cannot break unnoticed: every figure and
every sizing line it prints is a positive number."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURES = (
    "Python CPU per update, in process", "Python CPU per update, botflow serve over HTTP",
    "Redis CPU per update, in process", "Redis CPU per update, botflow serve over HTTP",
    "Redis commands per update, in process", "Redis commands per update, botflow serve over HTTP",
    "Redis memory per live dialog", "replica RSS per 1,000 live dialogs",
)
SIZING = ("one replica core (Python)", "one Redis (single-threaded)", "one Redis Cluster master")


def test_the_capacity_benchmark_prints_every_figure() -> None:
    run = subprocess.run([sys.executable, "bench/capacity.py", "--quick"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = dict(re.findall(r"^\| ([^|]+?) \| ([-0-9.]+) \|", run.stdout, re.MULTILINE))
    missing = [name for name in FIGURES + SIZING if name not in rows]
    assert not missing, (missing, run.stdout)
    not_positive = {name: rows[name] for name in FIGURES + SIZING if not float(rows[name]) > 0}
    assert not not_positive, (not_positive, run.stdout)
    # The turns really went through Redis: a turn is a lock, a load and a commit at the least.
    assert float(rows["Redis commands per update, botflow serve over HTTP"]) >= 2
    example = re.search(r"^example: 1000 bots at the cap = 30,000 updates/s need ([0-9.]+) replica cores, "
                        r"([0-9.]+) Redis cores", run.stdout, re.MULTILINE)
    assert example and float(example[1]) > 0 and float(example[2]) > 0, run.stdout
