"""Dialog tests: generation time and test count for the examples and a 300-state flow, and a replay of
10,000 recorded dialogs against a changed draft.

    python bench/testing.py [--dialogs 10000] [--redis redis://127.0.0.1:6379/0]

Generation runs the search of flows/testing/generate.py (the engine as the oracle); the replay turns
timeline records written exactly as the runtime writes them (server/runtime/timeline.record) back into
updates with the adapter in server/services/replay.py and replays them with flows/testing/replay.py.
Figures are wall-clock and CPU seconds of one core, best of a few runs.
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import validate as big_flow  # noqa: E402  (the large-flow document builder of bench/validate.py)

from flows.engine import catch_up, step  # noqa: E402
from flows.load import load  # noqa: E402
from flows.dialog import Update  # noqa: E402
from flows.testing.generate import generate  # noqa: E402
from flows.testing.replay import replay  # noqa: E402
from server.runtime import timeline  # noqa: E402
from server.services.replay import recorded_dialogs  # noqa: E402


def timed(run, repeat: int = 3) -> tuple[float, float, Any]:
    """Best wall and CPU seconds of `repeat` runs, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = run()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus), result


def flow_of_300() -> dict[str, Any]:
    """bench/validate.py's large flow at 300 states (3 sections) and 900 transitions."""
    big_flow.STATES, big_flow.TRANSITIONS = 300, 900
    return big_flow.document()


def generation() -> None:
    print("generation (search with the engine as oracle):")
    cases = [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in sorted((ROOT / "examples").glob("*.json"))]
    cases.append(("300 states", flow_of_300()))
    for name, document in cases:
        flow = load(document)
        wall, cpu, result = timed(lambda: generate(flow), repeat=3 if len(flow.states) < 100 else 1)
        steps = sum(len(t["steps"]) for t in result["tests"])
        print(f"  {name:<12} {len(flow.states):>4} states {len(flow.transitions):>4} transitions: "
              f"{len(result['tests']):>3} tests, {steps:>5} steps, covered {result['coverage']['percent']:>5}% "
              f"({len(result['uncovered'])} uncovered), searched {result['searched']} dialogs, "
              f"{wall * 1000:8.1f} ms wall {cpu * 1000:8.1f} ms CPU")


SCRIPTS = [
    ["/start", "Иван", "+79991234567", "ivan@example.com", ("press", "yes")],
    ["/start", "Анна", "12", "89990001122", "anna@example.com", "да"],
    ["/start", "Олег", "+79990000000", "oleg@example.com", "нет"],
    ["/start", "Пётр", "/cancel"],
    ["/start", "Мария", "89991112233", ("idle", 901), "maria@example.com", ("press", "yes")],
    ["/start", "Ян", "назад", "Ян", "+79995554433"],
]


def recorded(flow, n: int, seed: int = 3) -> list[tuple[str, list[dict[str, Any]]]]:
    """n users' timelines as the runtime records them (one record per turn, timers at their due time)."""
    rng = random.Random(seed)
    out = []
    for user in range(n):
        records, session, now = [], None, 1_800_000_000.0 + user
        for item in rng.choice(SCRIPTS):
            now += rng.uniform(2, 30)
            if isinstance(item, tuple) and item[0] == "idle":
                for result in catch_up(flow, session, now + item[1]):
                    before = session.state if session else None
                    session = result.dialog
                    records.append(timeline.record(now + item[1], Update.tick(), before, result,
                                                   session.to_dict() if session else None))
                now += item[1]
                continue
            update = Update.button(item[1]) if isinstance(item, tuple) else Update.message(item)
            before = session.state if session else None
            result = step(flow, session, update, now)
            session = result.dialog
            records.append(timeline.record(now, update, before, result, session.to_dict() if session else None))
        out.append((str(user), json.loads(json.dumps(records))))  # as read back from a store
    return out


def replaying(n: int) -> None:
    document = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    live = load(document)
    timelines = recorded(live, n)
    draft_doc = copy.deepcopy(document)
    draft_doc["states"][2]["say"][0]["text"] = "Ваш email, пожалуйста"  # ask_email: a changed text
    draft = load(draft_doc)

    def run() -> dict[str, Any]:
        return replay(draft, [recorded_dialogs(user, records) for user, records in timelines])

    wall, cpu, report = timed(run)
    turns = sum(len(r) for _, r in timelines)
    print(f"replay of {report['dialogs']} recorded dialogs ({turns} turns) against a draft with one changed text:")
    print(f"  {report['differ']} differ, {report['same']} same, {len(report['groups'])} groups; "
          f"{wall:.2f} s wall, {cpu:.2f} s CPU, {report['dialogs'] / wall:,.0f} dialogs/s")


async def replaying_from_redis(n: int, url: str) -> None:
    """The same replay with the timelines written by the runtime's own commit into Redis and read back
    through the store (SCAN for the users, LRANGE per user), under a private key prefix removed after."""
    import asyncio
    import secrets as _secrets

    from server.runtime.stores.base import TurnCommit, new_token
    from server.runtime.stores.redis import RedisStore
    from server.services.replay import timelines as stored_timelines
    from flows.testing.replay import Report

    document = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    timelines = recorded(load(document), n)
    draft_doc = copy.deepcopy(document)
    draft_doc["states"][2]["say"][0]["text"] = "Ваш email, пожалуйста"
    draft = load(draft_doc)
    prefix = f"bench-replay-{_secrets.token_hex(4)}"
    store = RedisStore(url, prefix=prefix)
    try:
        async def write(user: str, records: list[dict[str, Any]]) -> None:
            for rec in records:
                token = new_token()
                loaded = await store.begin("bench", user, token)
                await store.commit("bench", user, token, TurnCommit(dialog=None, timeline=rec, had_timer=False), loaded)

        w = time.perf_counter()
        for start in range(0, len(timelines), 500):
            await asyncio.gather(*(write(u, r) for u, r in timelines[start:start + 500]))
        written = time.perf_counter() - w

        async def run() -> dict[str, Any]:
            report = Report(draft)
            async for user, records in stored_timelines(store, "bench", None):
                report.add(recorded_dialogs(user, records))
            return report.result()

        w, c = time.perf_counter(), time.process_time()
        report = await run()
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        print(f"the same {report['dialogs']} dialogs from Redis (written by the store's commit in {written:.1f} s): "
              f"{report['differ']} differ; {wall:.2f} s wall, {cpu:.2f} s CPU, {report['dialogs'] / wall:,.0f} dialogs/s")
    finally:
        cursor: Any = b"0"
        while True:
            cursor, keys = await store.client.call("SCAN", cursor, "MATCH", f"{prefix}:*", "COUNT", 1000)
            if keys:
                await store.client.call("DEL", *keys)
            if cursor in (b"0", 0):
                break
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogs", type=int, default=10_000)
    parser.add_argument("--redis", metavar="URL", help="also replay from Redis, e.g. redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    generation()
    replaying(args.dialogs)
    if args.redis:
        import asyncio

        asyncio.run(replaying_from_redis(args.dialogs, args.redis))


if __name__ == "__main__":
    main()
