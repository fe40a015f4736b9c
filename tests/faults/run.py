"""Run the fault matrix and print its table: `python tests/faults/run.py [--only KEY ...] [--users N]`."""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.faults.cluster import Cluster  # noqa: E402
from tests.faults.experiments import Result, run  # noqa: E402
from tests.faults.matrix import BY_KEY, MATRIX  # noqa: E402

HEADER = ("| experiment | users | replies | lost | doubled (unexplained) | unexpected | seen backwards | told place lost | "
          "unknown outcome | resumed by another replica | users hit | longest stall s | webhook non-200 | most calls in 1 s at MAX | s |")


def row(result: Result) -> str:
    v = result.verdict
    notes = "; ".join(result.notes)
    return (f"| {result.experiment.title}{f' ({notes})' if notes else ''} | {v.users} | {v.expected} | {v.lost} | "
            f"{v.doubled} ({v.doubled_unexplained}) | {v.unexpected} | {v.out_of_order} | {v.told} | {v.unknown} | {v.resumed} | "
            f"{v.users_hit} | {v.stall:.1f} | {result.non_200} | {result.peak_rate} | {result.seconds:.0f} |")


async def _one(cluster: Cluster, key: str, users: int | None, detail: bool) -> Result | None:
    started = time.monotonic()
    try:
        result = await run(cluster, BY_KEY[key], users)
    except Exception as exc:  # noqa: BLE001 - one broken experiment must not hide the others
        print(f"| {BY_KEY[key].title} | failed to run: {exc!r} after {time.monotonic() - started:.0f} s |",
              flush=True)
        return None
    print(row(result), flush=True)
    if detail:
        print("\n".join(result.details), flush=True)
    return result


async def main_async(keys: list[str], users: int | None, detail: bool = False) -> int:
    results = []
    shared = [key for key in keys if BY_KEY[key].cluster is None]
    if shared:
        with Cluster(max_rate=30.0) as cluster:
            for key in shared:
                results.append(await _one(cluster, key, users, detail))
    for key in keys:  # the rows with a topology of their own, each on a fresh one
        if BY_KEY[key].cluster is not None:
            try:
                own = await asyncio.to_thread(Cluster(max_rate=30.0, **BY_KEY[key].cluster).start)
            except Exception as exc:  # noqa: BLE001
                print(f"| {BY_KEY[key].title} | its cluster did not start: {exc!r} |", flush=True)
                results.append(None)
                continue
            try:
                results.append(await _one(own, key, users, detail))
            finally:
                await asyncio.to_thread(own.close)
    failed = results.count(None)
    results = [r for r in results if r is not None]
    print()
    print(HEADER)
    print("|---|" + "---:|" * 14)
    for result in results:
        print(row(result))
    print("\nreplies: expected in all; doubled (unexplained): extra copies (those not explained by a send whose "
          "outcome the sender could not know, nor by a send another replica resumed after its sender stopped); unexpected: replies the dialog should never give; "
          "seen backwards: an earlier reply arriving after a later one; told place lost: users given the flow's "
          "lost-place text (rows that lose Redis's data on purpose judge them on what came before it); "
          "stall: the longest wait from a user's message to its last reply")
    return 0 if not failed and all(r.clean for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", choices=sorted(BY_KEY), help="experiments to run (default all)")
    parser.add_argument("--users", type=int, help="users per experiment (default: each experiment's own)")
    parser.add_argument("--detail", action="store_true", help="print what each user hit expected and got")
    args = parser.parse_args(argv)
    return asyncio.run(main_async(args.only or [e.key for e in MATRIX], args.users, args.detail))


if __name__ == "__main__":
    sys.exit(main())
