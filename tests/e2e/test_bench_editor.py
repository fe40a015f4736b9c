"""A small run of bench/editor.py, so the benchmark cannot break unnoticed (it once failed on the pages'
Content-Security-Policy): both parts, the flow with saved places and an import without them."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.e2e.conftest import ROOT

pytestmark = pytest.mark.e2e


def test_the_editor_benchmark_runs_under_the_real_policy() -> None:
    run = subprocess.run(
        [sys.executable, "bench/editor.py", "--states", "60", "--rounds", "1", "--unplaced", "120",
         "--timeout", "90"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "page error" not in run.stderr, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    (imported,) = result["unplaced"]
    assert "error" not in imported, imported
    # The import was laid out by the editor and its places saved as the draft's layout.
    assert imported["saved_positions"] == imported["states"] == 120
    assert imported["layout_engine"] in {"elk", "quick"}
    assert imported["interactive_s"] > 0 and imported["peak_memory_mb"] > 0
    # The rounds with saved places opened the editor and drew a transition in both drawings.
    for mode in ("cards", "titles"):
        assert result[mode]["add_painted_ms"]["median"] > 0
    assert result["cards"]["cards_drawn"]["median"] > 0
