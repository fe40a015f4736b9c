"""Validation speed on a large flow: 10,000 states and 30,000 transitions, best of a few runs on one core."""
from __future__ import annotations

import gc
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.load import load  # noqa: E402
from flows.validate import validate  # noqa: E402

GOAL = 0.5
STATES = 10_000
TRANSITIONS = 30_000
SECTION = 100  # states per section: 98 waiting states, then a "refused" and a "done" final state
LAST_MENU = 96  # its "more" button opens the next section
GUARDED = [index for index in range(4, SECTION - 2, 10) if index % 3]  # input states with an `if`
INPUTS = [("text", {"min_length": 2}), ("phone", {}), ("email", {}), ("number", {"min": 0, "max": 999}),
          ("choice", {"choices": ["Москва", "Казань", "Другое"]})]


def _sid(section: int, index: int) -> str:
    return f"s{section}_{index}"


def _key(section: int, index: int) -> str:
    return "name" if section == 0 and index == 1 else f"k{section}_{index}"


def _waiting(section: int, index: int) -> dict[str, Any]:
    """Every third state is a button menu, the others ask for a value; texts read earlier answers."""
    known = section > 0 or index > 1  # the name is asked for in the second state
    prev = f" Вы указали {{{_key(section, index - 1)}}}." if index % 3 != 1 and index > 1 else ""
    hello = "{name}, " if known else ""
    if index % 3 == 0:
        buttons = [[{"text": "Да", "payload": "yes"}, {"text": "Нет", "payload": "no"}]]
        if index == LAST_MENU:
            buttons.append([{"text": "Ещё раздел", "payload": "more"}])
        return {"id": _sid(section, index), "title": f"Menu {index}",
                "say": [{"text": f"{hello}шаг {index}.{prev} Продолжаем?", "buttons": buttons}]}
    kind, options = INPUTS[index % len(INPUTS)]
    return {"id": _sid(section, index), "title": f"Ask {index}",
            "say": [{"text": f"{hello}шаг {index}: введите значение.{prev}",
                     "buttons": [[{"text": "Пропустить", "payload": "skip"}]]}],
            "input": {"type": kind, "save_as": _key(section, index),
                      "error": f"Не подходит: повторите{', {name}' if known else ''}.", **options}}


def _transitions(section: int, index: int) -> list[dict[str, Any]]:
    """Two or three ways on per waiting state: the answer, a shortcut, a way back, a timer."""
    here, after = _sid(section, index), _sid(section, index + 1 if index < SECTION - 3 else SECTION - 1)
    if index % 3 == 0:
        found = [
            {"from": here, "to": after, "on": "button", "payload": "yes", "set": {f"a{section}_{index}": "yes"}},
            {"from": here, "to": _sid(section, SECTION - 2), "on": "button", "payload": "no"},
        ]
        if index == LAST_MENU and section + 1 < STATES // SECTION:
            found.append({"from": here, "to": _sid(section + 1, 0), "on": "button", "payload": "more",
                          "set": {"section": str(section + 1)}})
        elif index % 6 == 0:
            found.append({"from": here, "to": here, "on": "timeout", "after": 3600})
        return found
    key = _key(section, index)
    return [
        {"from": here, "to": after, "on": "input",
         **({"if": [{"var": key, "op": "ge", "value": 10}]} if index in GUARDED else {})},
        {"from": here, "to": _sid(section, index - 1), "on": "text", "match": ["назад", "back"]},
        {"from": here, "to": after, "on": "button", "payload": "skip", "set": {key: "-", "skipped": "{name}"}},
    ]


def document(seed: int = 7) -> dict[str, Any]:
    """A flow of STATES states and exactly TRANSITIONS transitions."""
    rng = random.Random(seed)
    sections = STATES // SECTION
    states: list[dict[str, Any]] = []
    transitions: list[dict[str, Any]] = []
    for section in range(sections):
        for index in range(SECTION - 2):
            states.append(_waiting(section, index))
            transitions.extend(_transitions(section, index))
        states.append({"id": _sid(section, SECTION - 2), "final": True, "say": [{"text": "Жаль. До встречи!"}]})
        states.append({"id": _sid(section, SECTION - 1), "final": True,
                       "say": [{"text": "Готово, {name}! Раздел {section}."}]})
    # States whose input transition has an `if` get an unguarded second one.
    for section in range(sections):
        for index in GUARDED:
            transitions.append({"from": _sid(section, index), "to": _sid(section, SECTION - 2), "on": "input"})
    # The rest: operators closing dialogs from outside, the way a CRM pushes events.
    while len(transitions) < TRANSITIONS:
        section, index = rng.randrange(sections), rng.randrange(SECTION - 2)
        transitions.append({"from": _sid(section, index), "to": _sid(section, SECTION - 1 - rng.randrange(2)),
                            "on": "event", "name": f"operator_closed_{len(transitions)}",
                            "set": {"closed_by": "operator"}})
    for number, tr in enumerate(transitions):
        tr["id"] = f"t{number}"
    return {
        "format": "botflow/v1", "id": "big", "title": "Large flow", "start": _sid(0, 0),
        "settings": {"session_ttl": 86400, "fallback": "Не понял, {name}. Повторите.",
                     "reminder": {"after": 3600, "text": "Продолжим?"}},
        "commands": {"cancel": {"match": ["/cancel", "отмена"], "reply": "Отменено."},
                     "help": {"match": ["/help"], "reply": "Отвечайте по одному вопросу."}},
        "states": states,
        "transitions": transitions,
    }


class GcClock:
    """CPU seconds the interpreter spends collecting garbage, from its own start/stop callbacks."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.total += time.process_time() - self._start


GC = GcClock()


def best(run: Callable[[], Any], repeat: int = 5) -> tuple[float, float, Any, float]:
    """The shortest wall-clock and CPU times of `repeat` runs, the last result, and the fastest run's
    CPU time spent collecting garbage.

    CPU time is printed too because on a shared machine other processes stretch the wall clock; the
    collector's share because a full collection walks every object of the process (here mostly the
    benchmark's own document), whichever code's allocations set it off.
    """
    walls, cpus = [], []
    result = None
    for _ in range(repeat):
        wall, cpu, collecting = time.perf_counter(), time.process_time(), GC.total
        result = run()
        cpus.append((time.process_time() - cpu, GC.total - collecting))
        walls.append(time.perf_counter() - wall)
    cpu, collecting = min(cpus)
    return min(walls), cpu, result, collecting


def main() -> None:
    """Print load and validation times against the goal, and what was found."""
    doc = document()
    load_wall, load_cpu, flow, load_gc = best(lambda: load(doc), repeat=3)
    wall, cpu, issues, _ = best(lambda: validate(flow))
    size = f"{len(flow.states)} states / {len(flow.transitions)} transitions"
    print(f"load {size}: {load_wall:.2f} s (CPU {load_cpu:.2f} s, of which {load_gc:.2f} s collecting garbage;"
          f" {load_cpu / len(flow.states) * 1e6:.0f} µs per state)")
    print(f"validate {size}: {wall:.2f} s (goal {GOAL} s; CPU {cpu:.2f} s)")
    counts = Counter((item.severity, item.code) for item in issues)
    print("issues: " + (", ".join(f"{code} ({severity}) {n}" for (severity, code), n in sorted(counts.items()))
                        or "none"))


if __name__ == "__main__":
    main()
