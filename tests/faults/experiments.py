"""The fault matrix: each experiment is a dialog, a way of delivering it, and the damage done meanwhile."""
from __future__ import annotations

import asyncio
import copy
import itertools
import json
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.model import DEFAULT_LOST_PLACE
from server.channels.max.fake.app import bot_key
from server.logs import UserHasher
from tests.faults.cluster import Cluster, bot_token, faketime
from tests.faults.play import Hooks, Inbox, Player, Step, Webhooks, message
from tests.faults.verdict import Verdict, judge

REGISTRATION = Path(__file__).resolve().parents[2] / "examples" / "registration.json"
_users = itertools.count(7_000_000 + (int(time.time()) % 1000) * 10_000)


@dataclass
class Run:
    """What a fault function may touch while the players play."""

    cluster: Cluster
    experiment: Experiment
    bot: str
    hooks: Hooks
    players: list[Player]
    started: float = field(default_factory=time.monotonic)
    notes: list[str] = field(default_factory=list)
    flagged: bool = False  # an extra check (left-over state, say) failed
    flow: str = ""  # the id of the flow the bot serves

    async def at(self, seconds: float) -> None:
        """Sleep until `seconds` after the players started."""
        await asyncio.sleep(max(0.0, self.started + seconds - time.monotonic()))

    async def reached(self, step: int, fraction: float = 0.5, timeout: float = 120.0) -> None:
        """Wait until that share of the players has sent `step` (so the damage lands mid-dialog)."""
        deadline = time.monotonic() + timeout
        while sum(p.at_step >= step for p in self.players) < fraction * len(self.players):
            if time.monotonic() > deadline:
                raise TimeoutError(f"players did not reach step {step} within {timeout:g} s")
            await asyncio.sleep(0.01)


def registration(user: int) -> list[tuple[list[str], float]]:
    """The registration dialog: (texts sent at once, idle seconds before) per step."""
    return [(["/start"], 0), ([f"Иван {user}"], 0), ([f"+7999{user % 10_000_000:07d}"], 0),
            ([f"user{user}@example.com"], 0), (["да"], 0)]


@dataclass
class Experiment:
    """One row of the matrix."""

    key: str
    title: str
    users: int = 12
    fault: Callable[[Run], Awaitable[None]] | None = None
    script: Callable[[int], list[tuple[list[str], float]]] = registration
    document: Callable[[dict[str, Any]], dict[str, Any]] = lambda doc: doc
    copies: int = 1  # deliveries of every update, to different replicas at once
    pause_before: int | None = None  # players wait before this step until the fault lets them go
    patience: float = 45.0  # how long a user waits for a step's replies before going on anyway
    quiet: float = 3.0  # the run ends once nothing new arrived for this long...
    settle: float = 40.0  # ...or this long after the last step
    webhook_timeout: float = 10.0
    stagger: float = 0.0  # seconds between one player's start and the next one's
    after: Callable[[Run], Awaitable[None]] | None = None  # extra checks, adding notes
    skew: str | None = None  # replica 0's wall clock this far off for the run (faketime's "+4s", "-60s")
    # A cluster of its own, made with these arguments (`Cluster(sentinel=True)`), when the row needs
    # another topology or spends the one it has (a failover); None: the matrix's shared cluster.
    cluster: dict[str, Any] | None = None
    lost_place_ok: bool = False  # the store loses dialogs on purpose: a user told so is excused the rest


@dataclass
class Result:
    experiment: Experiment
    verdict: Verdict
    non_200: int
    peak_rate: int  # the most calls MAX received within one second
    seconds: float
    notes: list[str]
    flagged: bool = False
    details: list[str] = field(default_factory=list)  # expected and received replies of each user hit

    @property
    def clean(self) -> bool:
        """Nothing lost, doubled beyond unknown outcomes, unexpected or out of order, and no extra check failed."""
        return self.verdict.clean and not self.flagged


def _document(experiment: Experiment) -> dict[str, Any]:
    doc = experiment.document(copy.deepcopy(json.loads(REGISTRATION.read_text())))
    doc["id"] = f"f-{experiment.key[:40]}-{uuid.uuid4().hex[:6]}"
    return doc


async def _players(cluster: Cluster, experiment: Experiment, doc: dict[str, Any], version: int,
                   users: int) -> list[Player]:
    """Players with the replies the engine gives their script in a sandbox (the expected ones)."""
    gate = asyncio.Semaphore(8)

    async def one(user: int) -> Player:
        steps = []
        session = f"expect-{user}"
        for texts, idle in experiment.script(user):
            expected: list[str] = []
            async with gate:
                if idle:
                    expected += await cluster.simulate(doc["id"], version, session, {"idle": idle})
                for text in texts:
                    expected += await cluster.simulate(doc["id"], version, session, {"text": text})
            steps.append(Step([message(user, t) for t in texts], expected, idle=idle))
        return Player(user, steps)

    return list(await asyncio.gather(*(one(next(_users)) for _ in range(users))))


def _calls(cluster: Cluster, bot: str) -> list[dict[str, Any]]:
    """The fake MAX's records of this bot's calls."""
    key = bot_key(bot_token(bot))
    return [c for c in cluster.fake.calls if c["bot"] == key]


def _peak_rate(calls: list[dict[str, Any]]) -> int:
    """The most calls MAX received from the bot within one second (as MAX counts them: any window
    (t - 1 s, t] of its own receive times), refused ones included."""
    times = sorted(c["time"] for c in calls if c["path"] in ("/messages", "/answers"))
    peak, start = 0, 0
    for end, t in enumerate(times):
        while times[start] <= t - 1.0:
            start += 1
        peak = max(peak, end - start + 1)
    return peak


def _refusals(calls: list[dict[str, Any]]) -> str:
    """How many sends MAX refused or never answered, by answer."""
    counts: dict[str, int] = {}
    for call in calls:
        if call["path"] == "/messages" and call["status"] != 200:
            key = "cut" if call["dropped"] else str(call["status"])
            counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"MAX answered {n} sends with {k}" for k, n in sorted(counts.items()))


def measured_offset(replica: Any) -> str | None:
    """The offset to Redis's clock the replica logged last (`clock_offset`, as its message says it)."""
    said = None
    for line in replica.log.read_text(errors="replace").splitlines():
        if '"clock_offset"' in line and '"skewed"' in line:
            try:
                said = json.loads(line)["message"].split()[4]
            except (ValueError, KeyError, IndexError):
                continue
    return None if said is None else f"{said} s"


def resumed_sends(cluster: Cluster, bot: str) -> Counter[str]:
    """Per user (as the logs name them): sends a replica took over from a sender that stopped, and sends
    that went out after their sender's claim may have lapsed (both logged as of unknown outcome)."""
    counts: Counter[str] = Counter()
    for replica in cluster.replicas:
        if not replica.log.exists():
            continue
        for line in replica.log.read_text(errors="replace").splitlines():
            if '"outbox_takeover"' not in line and '"send_past_claim"' not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("bot") == bot:
                counts[event.get("user")] += 1
    return counts


async def run(cluster: Cluster, experiment: Experiment, users: int | None = None,
              quiet: float | None = None) -> Result:
    """Play one experiment on a fresh bot; every fault is undone and every replica up again afterwards.

    `quiet` (default: the experiment's) is how long nothing new must arrive before the replies are
    judged: it must outlast every lock and lease after which a late copy could still be sent.
    """
    await cluster.ensure_all_up()
    skewed = None
    if experiment.skew is not None:
        await cluster.restart_with(cluster.replicas[0], faketime(experiment.skew))
        skewed = measured_offset(cluster.replicas[0])
    cluster.fake.clear()
    bot = f"f{uuid.uuid4().hex[:10]}"
    doc = _document(experiment)
    version = await cluster.deploy(bot, doc)
    players = await _players(cluster, experiment, doc, version, users or experiment.users)
    inbox = Inbox(cluster.fake, bot, {p.user for p in players})
    hooks = Hooks(len(players), experiment.pause_before)
    webhooks = Webhooks(cluster, bot, timeout=experiment.webhook_timeout)
    ctx = Run(cluster, experiment, bot, hooks, players, flow=doc["id"])
    if experiment.skew is not None:
        ctx.notes.append(f"replica 0 measured its clock {skewed} off Redis's" if skewed else
                         "replica 0 logged no clock offset: faketime did not take?")
        ctx.flagged = ctx.flagged or skewed is None
    began = time.monotonic()
    inbox.start()
    fault = asyncio.create_task(experiment.fault(ctx)) if experiment.fault else None
    try:
        limit = sum(experiment.patience + 130 for _ in players[0].steps) + 120
        await asyncio.wait_for(asyncio.gather(*(p.play(hooks, webhooks, inbox, experiment.copies,
                                                        experiment.patience, i * experiment.stagger)
                                                 for i, p in enumerate(players))), limit + len(players) * experiment.stagger)
        if fault is not None:
            await asyncio.wait_for(fault, 180)
        wait = experiment.quiet if quiet is None else quiet
        await inbox.quiet(wait, max(experiment.settle, wait + 5))
        if experiment.after is not None:
            await experiment.after(ctx)
    finally:
        if fault is not None and not fault.done():
            fault.cancel()
        await inbox.stop()
        await webhooks.close()
        calls = _calls(cluster, bot)
        peak, refused = _peak_rate(calls), _refusals(calls)
        cluster.fake.clear()
        if experiment.skew is not None:
            await cluster.restart_with(cluster.replicas[0], {})
    if refused:
        ctx.notes.append(refused)
    if peak > cluster.max_rate:
        ctx.notes.append(f"{peak} calls to one bot within a second at MAX, over its rate of {cluster.max_rate:g}/s")
        ctx.flagged = True
    total = Verdict()
    details = []
    resumed, log_name = resumed_sends(cluster, bot), UserHasher(cluster.secret_key)
    for player in players:
        got = inbox.by_user[player.user]
        verdict = judge(player, got, resumed=resumed[log_name(player.user)],
                        lost_place=DEFAULT_LOST_PLACE if experiment.lost_place_ok else None)
        total.add(verdict)
        if verdict.users_hit:
            details.append(f"user {player.user}: expected {player.expected}\n  got {[r.text for r in got]}")
    return Result(experiment, total, webhooks.non_200, peak, time.monotonic() - began, ctx.notes, ctx.flagged,
                  details)
