"""Size of the validation answer for a 62,000-state draft full of repeated problems: all issues vs the answer."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.load import load  # noqa: E402
from flows.validate import validate, validation_result  # noqa: E402

STATES = 62_000


def main() -> None:
    """Print how many issues the draft has, and the size of every issue against the bounded answer."""
    states = [{"id": f"s{i}", "say": [{"text": "{x} ?"}], "input": {"type": "text"}} for i in range(STATES)]
    transitions = [{"from": f"s{i}", "to": f"s{i + 1}", "on": "input"} for i in range(0, STATES - 1, 2)]
    flow = load({"format": "botflow/v1", "id": "big", "start": "s0", "states": states, "transitions": transitions})
    started = time.perf_counter()
    issues = validate(flow)
    everything = len(json.dumps([item.to_dict() for item in issues], ensure_ascii=False).encode())
    answer = validation_result(flow)
    size = len(json.dumps(answer, ensure_ascii=False).encode())
    print(f"{STATES:,} states: {len(issues):,} issues, {everything / 1e6:.1f} MB if all were listed;"
          f" the answer lists {len(answer['issues'])} in {size / 1e3:.0f} KB"
          f" ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
