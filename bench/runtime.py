"""Runtime throughput on the registration-5 workload, next to the three peer baselines measured in the same run.

    python bench/runtime.py [--users 2000] [--concurrency 64] [--peers seed,aiogram,maxapi] [--rounds 3] [--http]
                            [--parse-in-window]
    python bench/runtime.py --experiment-cost 4   # a running A/B experiment on and off, interleaved

In-process mode drives `Dispatcher.handle` (lock+dedupe+load → engine step → commit with the replies →
unlock → send → ack) with the peers' own driver. As for every peer, its input conversion (here the webhook
body's JSON decoding and parsing) runs before the clock starts unless `--parse-in-window` puts it, for
every peer alike, inside the timed window. The driver is the peers' own (bench.py in their folder), so
scheduling, warm-up, gc.freeze, correctness checks and Redis command counts are identical. `--http` also
runs the same workload as webhook POSTs over loopback against `botflow serve` and a bare Litestar app.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = Path(os.environ.get("BOTFLOW_PEERS_DIR", ROOT.parent / "shared" / "bench" / "peers"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(PEERS_DIR))


def peers_driver() -> Any:
    """The peers' bench.py, loaded under another name (ours is the bench/ folder)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("peers_driver", PEERS_DIR / "bench.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers_driver"] = module
    spec.loader.exec_module(module)
    return module


def run_botflow(args: argparse.Namespace, selftest: bool = False) -> dict[str, Any]:
    """One run of the runtime through the peers' driver; returns its JSON result."""
    import workload
    from runtime_peer import Peer

    driver = peers_driver()

    driver.load_peer = lambda name, url, ttl: Peer(url, ttl, workload, serve_gc=not args.default_gc)
    ns = argparse.Namespace(
        peer="botflow", users=args.users, concurrency=args.concurrency, redis_url=args.redis_url, ttl=1800,
        warmup_users=max(200, 2 * args.concurrency), parse_in_window=args.parse_in_window, selftest=selftest, profile=None,
        profile_out=None, gc_freeze=True, tag="runtime", aiogram_pin_response=False,
        aiogram_async_state_filters=False)
    if args.profile:
        ns.profile, ns.profile_out = "cprofile", str(ROOT / "bench" / "profile-botflow")
    return asyncio.run(driver.main_async(ns))


def run_peer(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One baseline run in its own process, exactly as the peers' README runs it."""
    done = subprocess.run(
        [sys.executable, "bench.py", "--peer", name, "--users", str(args.users), "--concurrency",
         str(args.concurrency), "--redis-url", args.redis_url, *(["--parse-in-window"] if args.parse_in_window else [])],
        cwd=PEERS_DIR, capture_output=True, text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"peer": name, "error": " | ".join(tail) or f"exit {done.returncode}"}
    return json.loads(lines[-1])


def row(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"| {result['peer']} | could not run: {result['error']} |"
    return (f"| {result['peer']} | {result['updates_per_s']:.0f} | {result['p50_ms']:.1f} | {result['p99_ms']:.1f} | "
            f"{result['redis_cmds_per_update']:.2f} | {result['py_cpu_us_per_update']:.0f} | "
            f"{'yes' if result.get('ok') else 'NO'} |")


def funnel_cost(args: argparse.Namespace, variable: str = "BOTFLOW_FUNNEL", rounds: int = 0,
                what: str = "funnel counters") -> int:
    """Updates/s with the funnel counters (or, with BENCH_EXPERIMENT, a running experiment) on and off,
    interleaved so drift hits both alike."""
    import statistics

    rounds = rounds or args.funnel_cost
    runs: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    for n in range(rounds):
        for mode in (("on", "off") if n % 2 == 0 else ("off", "on")):
            os.environ[variable] = mode
            runs[mode].append(run_botflow(args))
    os.environ.pop(variable, None)
    print(f"\nregistration-5 in process, U={args.users}, C={args.concurrency}, {rounds} rounds\n")
    print(f"| {what} | updates/s median | best | runs | Python CPU µs/update (median) | "
          "Redis cmds/update | ok |")
    print("|---|---:|---:|---|---:|---:|:-:|")
    medians, best, cpu = {}, {}, {}
    for mode, results in runs.items():
        rates = [r["updates_per_s"] for r in results]
        medians[mode], best[mode] = statistics.median(rates), max(rates)
        cpu[mode] = statistics.median(r["py_cpu_us_per_update"] for r in results)
        print(f"| {mode} | {medians[mode]:.0f} | {best[mode]:.0f} | {', '.join(f'{x:.0f}' for x in rates)} | "
              f"{cpu[mode]:.0f} | {results[0]['redis_cmds_per_update']:.2f} | "
              f"{'yes' if all(r.get('ok') for r in results) else 'NO'} |")
    # On a shared machine other work slows single runs by up to half: the best run of each side is the
    # least disturbed one, the median the typical one; Python CPU per update is the least noisy of the three.
    print(f"{what} cost {100 * (1 - medians['on'] / medians['off']):.1f}% of the median updates/s, "
          f"{100 * (1 - best['on'] / best['off']):.1f}% of the best, "
          f"{100 * (cpu['on'] / cpu['off'] - 1):.1f}% more Python CPU per update")
    print(json.dumps(runs, ensure_ascii=False), file=sys.stderr)
    return 0 if all(r.get("ok") for rs in runs.values() for r in rs) else 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    ap.add_argument("--peers", default="seed,aiogram,maxapi", help="baselines to run beside ('' for none)")
    ap.add_argument("--http", action="store_true", help="also run the webhook-over-HTTP mode")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds, in process and in --http mode")
    ap.add_argument("--profile", action="store_true", help="cProfile the runtime run (slower)")
    ap.add_argument("--parse-in-window", action="store_true",
                    help="time every peer's input conversion too (ours: decoding and parsing the webhook body)")
    ap.add_argument("--default-gc", action="store_true",
                    help="run the runtime with Python's default collector settings, not those `botflow serve` sets")
    ap.add_argument("--funnel-cost", type=int, default=0, metavar="ROUNDS",
                    help="only compare funnel counting on and off, in ROUNDS interleaved pairs of runs")
    ap.add_argument("--experiment-cost", type=int, default=0, metavar="ROUNDS",
                    help="only compare a running A/B experiment (arm dealing and its counting) on and off")
    args = ap.parse_args()
    if args.funnel_cost:
        return funnel_cost(args)
    if args.experiment_cost:
        return funnel_cost(args, "BENCH_EXPERIMENT", args.experiment_cost, "experiment running")

    selftest = run_botflow(args, selftest=True)
    print(f"selftest (branch scripts of workload.py): {selftest['selftest']}", flush=True)
    peers = list(filter(None, args.peers.split(",")))
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in ["botflow", *peers]}
    # Rounds alternate the runtime and the baselines, so a machine that slows down midway (other tenants
    # of a shared host halve single runs at times) slows both sides alike; medians are compared.
    for _ in range(max(1, args.rounds)):
        runs["botflow"].append(run_botflow(args))
        for name in peers:
            runs[name].append(run_peer(name, args))
    print(f"\nregistration-5 in process, U={args.users}, C={args.concurrency}, {max(1, args.rounds)} interleaved "
          f"round(s); each run, then the medians\n")
    print("| peer | updates/s | p50 ms | p99 ms | Redis cmds/update | Python CPU µs/update | ok |")
    print("|---|---:|---:|---:|---:|---:|:-:|")
    for results in runs.values():
        for result in results:
            print(row(result))
    medians = {name: median(results) for name, results in runs.items()}
    for result in medians.values():
        print(row(result))
    ours = medians["botflow"]
    for name in ("seed", "aiogram", "maxapi"):
        if name in medians and "error" not in medians[name] and "error" not in ours:
            print(f"botflow / {name}: {ours['updates_per_s'] / medians[name]['updates_per_s']:.2f}x updates/s, "
                  f"{ours['py_cpu_us_per_update'] / medians[name]['py_cpu_us_per_update']:.2f}x the Python CPU "
                  f"per update (medians)")
    print(json.dumps(runs, ensure_ascii=False), file=sys.stderr)
    if args.http:
        from runtime_http import run_http

        run_http(args)
    ok = all(r.get("ok") for r in runs["botflow"])
    return 0 if ok and selftest.get("selftest") == "ok" else 2


def median(results: list[dict[str, Any]]) -> dict[str, Any]:
    """A row of per-figure medians over one peer's runs (an error when none of them ran)."""
    import statistics

    good = [r for r in results if "error" not in r]
    if not good:
        return results[-1]
    keys = ("updates_per_s", "p50_ms", "p99_ms", "redis_cmds_per_update", "py_cpu_us_per_update")
    return {"peer": f"{good[0]['peer']} (median)", "ok": all(r.get("ok") for r in good),
            **{key: statistics.median(r[key] for r in good) for key in keys}}


if __name__ == "__main__":
    sys.exit(main())
