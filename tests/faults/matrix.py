"""The experiments the issue lists, as rows of one matrix; `QUICK` names the few the test suite runs."""
from __future__ import annotations

import asyncio
import shutil
import time
from typing import Any

from tests.faults.experiments import Experiment, Run


# ---- damage, done while the players play ------------------------------------------------------------
async def _when(run: Run, at: float | None) -> str:
    """Wait for the moment of the damage: `at` seconds in, or (None) once half the users sent step 2."""
    if at is None:
        await run.reached(2, 0.5)
        return "mid-dialog"
    await run.at(at)
    return f"at {at:g} s"


async def _kill_and_restart(run: Run, replica: int, at: float | None, down_for: float) -> None:
    when = await _when(run, at)
    target = run.cluster.replicas[replica]
    target.kill()
    run.notes.append(f"replica {replica} killed {when}")
    await run.cluster.restart(target, after=down_for)


def kill_replica(at: float | None = None, down_for: float = 2.0, slow: float = 0.0):
    async def fault(run: Run) -> None:
        if slow:
            run.cluster.fake.set_slow(slow, "/messages")
        try:
            await _kill_and_restart(run, 0, at, down_for)
        finally:
            run.cluster.fake.set_slow(0, "/messages")
    return fault


def stop_redis(at: float | None = None, down_for: float = 3.0, slow: float = 0.0, hard: bool = False):
    async def fault(run: Run) -> None:
        if slow:
            run.cluster.fake.set_slow(slow, "/messages")
        try:
            when = await _when(run, at)
            redis = run.cluster.redis
            await asyncio.to_thread(redis.kill if hard else redis.stop)
            run.notes.append(f"Redis {'kill -9' if hard else 'stopped'} {when} for {down_for:g} s")
            await asyncio.sleep(down_for)
            await asyncio.to_thread(redis.start)
        finally:
            run.cluster.fake.set_slow(0, "/messages")
    return fault


def restart_redis_empty(run_at: float | None = None):
    """Redis killed mid-dialog and started again without its files: every dialog it held is gone."""
    async def fault(run: Run) -> None:
        when = await _when(run, run_at)
        redis = run.cluster.redis
        await asyncio.to_thread(redis.kill)
        for path in redis.dir.iterdir():  # the AOF (a directory since Redis 7) and any snapshot
            if path.name.startswith("appendonly") or path.suffix in (".aof", ".rdb"):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        await asyncio.to_thread(redis.start)
        run.notes.append(f"Redis restarted empty {when}")
    return fault


def failover(behind: float = 0.0, slow: float = 0.3):
    """The Redis master killed -9 mid-dialog (MAX slow, so sends are in flight); the sentinels promote its
    replica. `behind`: the replica's stream is held back that long before the kill (it is that far behind),
    and players held before a later step (`pause_before`) go on once it is promoted, so the turns it lost
    are met again."""
    async def fault(run: Run) -> None:
        cluster = run.cluster
        assert cluster.replication_proxy is not None and cluster.redis_replica is not None
        cluster.fake.set_slow(slow, "/messages")
        try:
            when = await _when(run, None)
            if behind:
                cluster.replication_proxy.hold()
                await asyncio.sleep(behind)
            lag = await asyncio.to_thread(_lag, cluster.redis, cluster.redis_replica)
            if behind and lag <= 0:  # nothing to lose: the row would pass without testing anything
                run.flagged = True
            await asyncio.to_thread(cluster.redis.kill)
            killed = time.monotonic()
            while await asyncio.to_thread(_role_or_none, cluster.redis_replica) != "master":
                if time.monotonic() - killed > 30:
                    raise RuntimeError("the sentinels did not promote the replica within 30 s")
                await asyncio.sleep(0.1)
            run.notes.append(f"master killed {when}{f' with its replica {behind:g} s behind' if behind else ''} "
                             f"({lag} bytes of the stream not replicated), replica promoted after "
                             f"{time.monotonic() - killed:.1f} s")
        finally:
            cluster.fake.set_slow(0, "/messages")
            run.hooks.go.set()
    return fault


def _lag(master: Any, replica: Any) -> int:
    """How many bytes of the master's replication stream the replica has not applied."""
    from redis import Redis

    offsets = []
    for server in (master, replica):
        client = Redis.from_url(server.url, socket_timeout=2)
        try:
            offsets.append(int(client.info("replication")["master_repl_offset"]))
        finally:
            client.close()
    return offsets[0] - offsets[1]


def _role_or_none(server: Any) -> str | None:
    from tests.faults.cluster import _role

    try:
        return _role(server)
    except Exception:  # noqa: BLE001 - not answering yet
        return None


def database_down(seconds: float, publish: bool = False, mode: str = "closed", slow: float = 0.5):
    """PostgreSQL stopped (`closed`) or unreachable (`blackhole`) for `seconds` while every player goes on
    from step 1 (MAX slow, so the rest of the dialog falls within the outage); with `publish`, it goes
    right after a new version of the bot's flow is published (the same dialog, so the same replies)."""
    async def fault(run: Run) -> None:
        cluster = run.cluster
        assert cluster.pg_proxy is not None
        await run.hooks.arrived()
        if publish:
            async with cluster.api() as api:
                frozen = await api.post(f"/flows/{run.flow}/versions", json={"note": "again"})
                if frozen.status_code not in (200, 201):
                    raise RuntimeError(f"freezing again: {frozen.status_code} {frozen.text}")
                published = await api.post(f"/bots/{run.bot}/publish", json={
                    "flow": run.flow, "version": frozen.json()["version"], "sessions": "keep"})
                if published.status_code != 200:
                    raise RuntimeError(f"publishing again: {published.status_code} {published.text}")
        await asyncio.to_thread(cluster.pg_proxy.set, mode)
        cluster.fake.set_slow(slow, "/messages")
        run.hooks.go.set()
        run.notes.append(f"PostgreSQL {'unreachable' if mode == 'blackhole' else 'stopped'}"
                         f"{' right after a publish' if publish else ''} for {seconds:g} s from step 2")
        try:
            await asyncio.sleep(seconds)
        finally:
            cluster.fake.set_slow(0, "/messages")
            await asyncio.to_thread(cluster.pg_proxy.set, "forward")
    return fault


def pause_replica(seconds: float, slow: float = 0.3):
    """SIGSTOP replica 0 mid-dialog (MAX slow, so sends are in flight) for `seconds`, then SIGCONT."""
    async def fault(run: Run) -> None:
        run.cluster.fake.set_slow(slow, "/messages")
        try:
            when = await _when(run, None)
            target = run.cluster.replicas[0]
            target.pause()
            run.notes.append(f"replica 0 paused {when} for {seconds:g} s")
            try:
                await asyncio.sleep(seconds)
            finally:
                target.resume()
        finally:
            run.cluster.fake.set_slow(0, "/messages")
    return fault


def partition(seconds: float, slow: float = 0.3):
    """Replica 0 cut off from Redis (its packets dropped, not refused) mid-dialog for `seconds`."""
    async def fault(run: Run) -> None:
        proxy = run.cluster.redis_proxy
        assert proxy is not None
        run.cluster.fake.set_slow(slow, "/messages")
        try:
            when = await _when(run, None)
            await asyncio.to_thread(proxy.set, "blackhole")
            run.notes.append(f"replica 0 cut off from Redis {when} for {seconds:g} s")
            try:
                await asyncio.sleep(seconds)
            finally:
                await asyncio.to_thread(proxy.set, "forward")
        finally:
            run.cluster.fake.set_slow(0, "/messages")
    return fault


async def hold_past_client_timeout(run: Run) -> None:
    """Every reply of one step is held 12 s, beyond the runtime's 10 s client timeout."""
    await run.hooks.arrived()
    run.cluster.fake.delay_next(len(run.players), 12.0, "/messages")
    run.hooks.go.set()


async def kill_while_outbox_drains(run: Run) -> None:
    """MAX refuses a step's replies (they queue), comes back slow, and a replica is killed mid-drain."""
    await run.hooks.arrived()
    fake = run.cluster.fake
    fake.set_down(True)
    run.hooks.go.set()
    await asyncio.sleep(4.0)  # the step's webhooks answer 200 once their replies are queued
    fake.set_slow(1.0, "/messages")  # each send takes a second, so every replica has some in flight
    fake.set_down(False)
    try:
        await asyncio.sleep(2.5)  # past the first retry (1 s backoff) and into the drain
        target = run.cluster.replicas[0]
        target.kill()
        run.notes.append("replica 0 killed while draining")
        await asyncio.sleep(1.0)
    finally:
        fake.set_slow(0, "/messages")
    await run.cluster.restart(target, after=1.0)


async def kill_reminder_claimer(run: Run) -> None:
    """Reminders fall due over 3 s (staggered users) and are sent slowly; a replica is killed in the middle."""
    run.cluster.fake.set_slow(1.0, "/messages")
    try:
        await _kill_and_restart(run, 0, 5.5, 2.0)
    finally:
        run.cluster.fake.set_slow(0, "/messages")


def slow_for_step(seconds: float):
    async def fault(run: Run) -> None:
        await run.hooks.arrived()
        run.cluster.fake.set_slow(seconds, "/messages")
        run.hooks.go.set()
        await asyncio.sleep(seconds * 6)
        run.cluster.fake.set_slow(0, "/messages")
    return fault


async def max_down(run: Run) -> None:
    await run.at(1.0)
    run.cluster.fake.set_down(True, seconds=10.0)
    run.notes.append("MAX answered 503 for 10 s")


async def rate_limited(run: Run) -> None:
    run.cluster.fake.set_rate_limit(30, retry_after=1.0)


async def timers_left(run: Run) -> None:
    """Timer entries of this bot still in Redis after every dialog expired (they should be none)."""
    await asyncio.sleep(4.0)  # past the 3 s session_ttl and the 6 s timeout, plus a timer pass
    members = run.cluster.redis_call("ZRANGE", "botflow:v1:timers", 0, -1) or []
    left = sum(1 for m in members if m.decode().startswith(run.bot + "|"))
    run.notes.append(f"{left} timer entries left after the dialogs expired")
    run.flagged = run.flagged or left > 0


async def reminders_on_time(run: Run) -> None:
    """Each user's reminder came no sooner than 2.5 s after the greeting before it (it is due 3 s after)."""
    from tests.faults.experiments import _calls

    text = "Вы хотели завершить регистрацию"
    by_user: dict[Any, list[tuple[float, str]]] = {}
    for call in _calls(run.cluster, run.bot):
        if call["path"] == "/messages" and call.get("status") == 200:
            who = (call.get("query") or {}).get("chat_id") or (call.get("query") or {}).get("user_id")
            by_user.setdefault(who, []).append((call["time"], str((call.get("json") or {}).get("text"))))
    early = 0
    for sent in by_user.values():
        sent.sort()
        for (before, _), (at, said) in zip(sent, sent[1:]):
            early += text in said and at - before < 2.5
    run.notes.append(f"{early} reminders early")
    run.flagged = run.flagged or early > 0


async def lost_place_told(run: Run) -> None:
    """Every user greeted a second time (the dialog started again) was told first that their place was lost."""
    from flows.model import DEFAULT_LOST_PLACE
    from tests.faults.experiments import _calls

    greeting = "Привет! Как вас зовут?"
    by_user: dict[Any, list[tuple[float, str]]] = {}
    for call in _calls(run.cluster, run.bot):
        if call["path"] == "/messages" and call.get("status") == 200:
            who = (call.get("query") or {}).get("chat_id") or (call.get("query") or {}).get("user_id")
            by_user.setdefault(who, []).append((call["time"], str((call.get("json") or {}).get("text"))))
    told = silent = 0
    for sent in by_user.values():
        said = [text for _, text in sorted(sent)]
        told += DEFAULT_LOST_PLACE in said
        silent += sum(1 for i, text in enumerate(said) if greeting in text and greeting in " ".join(said[:i])
                      and (i == 0 or said[i - 1] != DEFAULT_LOST_PLACE))
    run.notes.append(f"{told} users told their place was lost, {silent} dialogs restarted without a word")
    run.flagged = run.flagged or silent > 0 or told == 0


# ---- dialogs -------------------------------------------------------------------------------------------
def short_reminder(doc: dict[str, Any]) -> dict[str, Any]:
    doc["settings"]["reminder"]["after"] = 3
    return doc


def four_messages_at_the_end(doc: dict[str, Any]) -> dict[str, Any]:
    done = next(s for s in doc["states"] if s["id"] == "confirmed")
    done["say"] = [{"text": f"Готово ({n}/4). Имя: {{name}}"} for n in range(1, 5)]
    return doc


def expires_before_timeout(doc: dict[str, Any]) -> dict[str, Any]:
    doc["settings"]["session_ttl"] = 3
    del doc["settings"]["reminder"]
    doc["transitions"].append({"id": "too_late", "from": "ask_phone", "to": "refused", "on": "timeout", "after": 6})
    return doc


def reminder_script(user: int) -> list[tuple[list[str], float]]:
    return [(["/start"], 0), ([], 3.0)]


def expiry_script(user: int) -> list[tuple[list[str], float]]:
    return [(["/start"], 0), ([f"Иван {user}"], 0), ([], 8.0)]


def start_only(user: int) -> list[tuple[list[str], float]]:
    return [(["/start"], 0)]


def fifty_at_once(user: int) -> list[tuple[list[str], float]]:
    return [(["/start"], 0), (["/help"] * 50, 0)]


# After a crash, nothing new for this long before judging: outlasts today's 30 s lock and 15 s timer lease,
# after which a late second copy could still go out.
LATE = 35.0
OUTBOX_LATE = 65.0  # the same for today's 60 s outbox lease

MATRIX = [
    Experiment("kill-slow", "replica killed while MAX is slow (3 s)", users=8, fault=kill_replica(2.0, 2.0, 3.0),
               quiet=LATE),
    Experiment("redis-stop-slow", "Redis stopped while MAX is slow (3 s)", users=12,
               fault=stop_redis(2.0, 3.0, slow=3.0), quiet=LATE),
    Experiment("hold-past-timeout", "MAX holds calls 12 s, past the 10 s client timeout", users=10,
               fault=hold_past_client_timeout, pause_before=1, patience=40, quiet=5.0),
    Experiment("kill-outbox", "replica killed while its outbox drains", users=30, fault=kill_while_outbox_drains,
               pause_before=1, patience=90, quiet=OUTBOX_LATE, settle=120),
    Experiment("kill-reminder", "reminder claimer killed (reminder after 3 s, MAX slow 1 s)", users=60,
               document=short_reminder, script=reminder_script, fault=kill_reminder_claimer, stagger=0.05,
               quiet=LATE, settle=90, patience=25),
    Experiment("turn-past-lock", "turn longer than the lock (4 messages at 8 s)", users=4,
               document=four_messages_at_the_end, fault=slow_for_step(8.0), pause_before=4, patience=60,
               quiet=10.0, settle=90),
    Experiment("crash-lock-held", "crash with a lock held (MAX slow 1.5 s)", users=10,
               fault=kill_replica(1.0, 1.0, 1.5), quiet=LATE),
    Experiment("expires-before-timer", "dialog expires (3 s) before its timeout (6 s)", users=10,
               document=expires_before_timeout, script=expiry_script, after=timers_left, patience=10),
    Experiment("kill", "replica killed, MAX fast", users=20, fault=kill_replica(None, 2.0), quiet=LATE),
    Experiment("redis-kill9", "Redis kill -9 and AOF restart", users=20, fault=stop_redis(None, 1.0, hard=True),
               quiet=LATE),
    Experiment("redis-empty", "Redis restarted empty (no persistence) mid-dialog", users=20,
               fault=restart_redis_empty(), after=lost_place_told, quiet=LATE, lost_place_ok=True),
    Experiment("429", "429 bursts with Retry-After (MAX allows 30 calls/s)", users=60, fault=rate_limited,
               patience=60),
    Experiment("burst", "150 users at once over 3 replicas (MAX allows 30 calls/s)", users=150, script=start_only,
               fault=rate_limited, patience=30),
    Experiment("max-down", "MAX down (503) for 10 s", users=20, fault=max_down, patience=40),
    Experiment("triple", "every update delivered 3 times, to 3 replicas at once", users=20, copies=3),
    Experiment("fifty", "50 parallel updates for one user", users=3, script=fifty_at_once, patience=60),
    Experiment("pause-7", "one replica SIGSTOPped mid-send 7 s (lease + 2 s)", users=12,
               document=four_messages_at_the_end, fault=pause_replica(7.0), quiet=LATE),
    Experiment("pause-30", "one replica SIGSTOPped mid-send 30 s", users=12,
               document=four_messages_at_the_end, fault=pause_replica(30.0), quiet=LATE, patience=60),
    Experiment("partition", "one replica cut off from Redis 20 s", users=12,
               document=four_messages_at_the_end, fault=partition(20.0), quiet=LATE, patience=60),
    Experiment("clock-ahead-4s", "one replica's clock 4 s ahead", users=12, document=four_messages_at_the_end,
               skew="+4s"),
    Experiment("clock-ahead-5m", "one replica's clock 5 min ahead, 3 s reminder", users=30, document=short_reminder,
               script=reminder_script, skew="+300s", stagger=0.05, patience=25, after=reminders_on_time),
    Experiment("failover-sync", "Sentinel failover, replica in sync (MIN_REPLICAS=1)", users=20,
               document=four_messages_at_the_end, fault=failover(), quiet=LATE, patience=60,
               cluster={"sentinel": True, "extra_env": {"BOTFLOW_REDIS_MIN_REPLICAS": "1"}}),
    Experiment("failover-behind", "Sentinel failover, replica 2 s behind", users=20,
               document=four_messages_at_the_end, fault=failover(behind=2.0), quiet=LATE, patience=60,
               pause_before=3, cluster={"sentinel": True}, lost_place_ok=True),
    Experiment("pg-down", "PostgreSQL unreachable 8 s during traffic", users=20, fault=database_down(8.0, mode="blackhole"),
               pause_before=1, patience=40, cluster={"pg_proxy": True}),
    Experiment("pg-down-publish", "PostgreSQL stopped 8 s right after a publish", users=20,
               fault=database_down(8.0, publish=True), pause_before=1, patience=40, cluster={"pg_proxy": True}),
    Experiment("clock-behind-60s", "one replica's clock 60 s behind, 3 s reminder", users=30, document=short_reminder,
               script=reminder_script, skew="-60s", stagger=0.05, patience=25, after=reminders_on_time),
]
BY_KEY = {e.key: e for e in MATRIX}
# The subset the test suite runs: small, about a minute on a quiet machine. Its crash waits QUICK_QUIET
# for late copies: enough for the ~5 s take-over the issue demands, not for today's 30 s lock.
QUICK = {"triple": 6, "fifty": 1, "crash-lock-held": 4, "burst": 150}
QUICK_QUIET = 12.0
