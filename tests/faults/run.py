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

HEADER = ("| experiment | users | replies | lost | doubled (unexplained) | unexpected | out of order | "
          "unknown outcome | resumed by another replica | users hit | longest stall s | webhook non-200 | peak MAX calls/s (5 s) | s |")


def row(result: Result) -> str:
    v = result.verdict
    notes = "; ".join(result.notes)
    return (f"| {result.experiment.title}{f' ({notes})' if notes else ''} | {v.users} | {v.expected} | {v.lost} | "
            f"{v.doubled} ({v.doubled_unexplained}) | {v.unexpected} | {v.out_of_order} | {v.unknown} | {v.resumed} | "
            f"{v.users_hit} | {v.stall:.1f} | {result.non_200} | {result.peak_rate:.0f} | {result.seconds:.0f} |")


async def main_async(keys: list[str], users: int | None, detail: bool = False) -> int:
    results = []
    with Cluster(max_rate=30.0) as cluster:
        for key in keys:
            started = time.monotonic()
            try:
                result = await run(cluster, BY_KEY[key], users)
            except Exception as exc:  # noqa: BLE001 - one broken experiment must not hide the others
                print(f"| {BY_KEY[key].title} | failed to run: {exc!r} after {time.monotonic() - started:.0f} s |",
                      flush=True)
                continue
            results.append(result)
            print(row(result), flush=True)
            if detail:
                print("\n".join(result.details), flush=True)
    print()
    print(HEADER)
    print("|---|" + "---:|" * 13)
    for result in results:
        print(row(result))
    print("\nreplies: expected in all; doubled (unexplained): extra copies (those not explained by a send whose "
          "outcome the sender could not know, nor by a send another replica resumed after its sender stopped); unexpected: replies the dialog should never give; "
          "stall: the longest wait from a user's message to its last reply")
    return 0 if all(r.clean for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", choices=sorted(BY_KEY), help="experiments to run (default all)")
    parser.add_argument("--users", type=int, help="users per experiment (default: each experiment's own)")
    parser.add_argument("--detail", action="store_true", help="print what each user hit expected and got")
    args = parser.parse_args(argv)
    return asyncio.run(main_async(args.only or [e.key for e in MATRIX], args.users, args.detail))


if __name__ == "__main__":
    sys.exit(main())
