"""Engine steps/s with a 3-language flow against the same flow without languages, in one run.

The registration example is given `languages: ["ru", "en", "tt"]` and every text it sends a text object in
those three (choices too); the dialogs are bench/engine.py's, each user writing from an app in another
language (en, tt, ru, en-US, none). Rounds alternate between the two flows, so both meet the same machine.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.engine import SCRIPTS  # noqa: E402
from flows.engine import step  # noqa: E402
from flows.languages import slots  # noqa: E402
from flows.load import load  # noqa: E402
from flows.model import Flow  # noqa: E402
from flows.dialog import Update  # noqa: E402

LOCALES = ("en", "tt", "ru", "en-US", None)


def translated(document: dict[str, Any]) -> dict[str, Any]:
    """The document in three languages: every sent text (and the choices) also in English and Tatar."""
    out = copy.deepcopy(document)
    out["languages"] = ["ru", "en", "tt"]
    for keys, value, what in list(slots(out)):
        holder = out
        for key in keys[:-1]:
            holder = holder[key]
        if what == "choices":
            holder[keys[-1]] = {"ru": value, "en": [f"en {v}" for v in value], "tt": [f"tt {v}" for v in value]}
        else:
            holder[keys[-1]] = {"ru": value, "en": f"[en] {value}", "tt": f"[tt] {value}"}
    return out


def scripts() -> list[list[Update]]:
    """The engine bench's dialogs, each user with a user_locale of their own."""
    return [[dataclasses.replace(update, locale=LOCALES[i % len(LOCALES)]) for update in script]
            for i, script in enumerate(SCRIPTS)]


def run(flow: Flow, dialogs: list[list[Update]], seconds: float = 0.4) -> float:
    """Steps per CPU second over the dialogs, round-robin, for about `seconds`."""
    per_round = sum(len(s) for s in dialogs)
    steps = 0
    now = 1_000_000.0
    started = time.process_time()
    deadline = started + seconds
    while time.process_time() < deadline:
        for _ in range(100):
            for script in dialogs:
                session = None
                for update in script:
                    now += 1.0
                    session = step(flow, session, update, now).dialog
        steps += 100 * per_round
    return steps / (time.process_time() - started)


def main() -> None:
    """Print both figures and their ratio (best of five interleaved rounds each)."""
    document = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    plain, multi = load(document), load(translated(document))
    dialogs = scripts()
    # The dialogs really run in their languages (a check, not part of the figure).
    opened = step(multi, None, dialogs[0][0], 0.0)
    assert opened.dialog is not None and opened.dialog.language == "en", opened
    assert opened.replies[0].text.startswith("[en]"), opened.replies[0].text
    plain_rates, multi_rates = [], []
    for _ in range(5):
        plain_rates.append(run(plain, dialogs))
        multi_rates.append(run(multi, dialogs))
    best_plain, best_multi = max(plain_rates), max(multi_rates)
    print(f"without languages: {best_plain:,.0f} steps/s; rounds {', '.join(f'{r:,.0f}' for r in plain_rates)}")
    print(f"3 languages:       {best_multi:,.0f} steps/s; rounds {', '.join(f'{r:,.0f}' for r in multi_rates)}")
    print(f"3 languages run at {best_multi / best_plain:.1%} of the speed without")


if __name__ == "__main__":
    main()
