"""Users playing a dialog through webhooks delivered the way MAX delivers them, and what reached each of them."""
from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from server.channels.max.fake import FakeMax
from tests.faults.fake_process import FakeMaxProcess
from server.channels.max.fake.app import bot_key
from tests.faults.cluster import WEBHOOK_SECRET, Cluster, bot_token

_mids = itertools.count(1)


def message(user: int, text: str) -> dict[str, Any]:
    """A message_created update from `user` in their dialog with the bot, with a fresh mid."""
    mid = next(_mids)
    now = int(time.time() * 1000)
    return {"update_type": "message_created", "timestamp": now,
            "message": {"sender": {"user_id": user, "first_name": "User", "is_bot": False},
                        "recipient": {"chat_id": user, "chat_type": "dialog"}, "timestamp": now,
                        "body": {"mid": f"mid.faults.{time.time_ns():x}.{mid}", "seq": mid, "text": text}}}


@dataclass
class Delivery:
    """One update's way to the bot: every attempt (replica, answer, time) until a 200 or the deadline."""

    attempts: list[tuple[int, str, float]] = field(default_factory=list)
    delivered: bool = False


class Webhooks:
    """Delivers updates like MAX: a non-200 or a timeout is retried with backoff, on another replica.

    The backoff starts at 0.25 s and doubles up to `backoff_cap` (1 s): short, so that a stall
    measures how soon the runtime can serve the user again, not the retry schedule.
    """

    def __init__(self, cluster: Cluster, bot: str, *, timeout: float = 10.0, deadline: float = 120.0,
                 backoff_cap: float = 1.0) -> None:
        self.cluster = cluster
        self.bot = bot
        self.timeout = timeout
        self.deadline = deadline
        self.backoff_cap = backoff_cap
        self.http = httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=500))
        self.non_200 = 0
        self.redelivered = 0
        self._next = itertools.count(random.randrange(len(cluster.replicas)))

    async def post(self, replica: int, body: bytes) -> str:
        url = f"{self.cluster.replicas[replica].url}/webhooks/max/{self.bot}"
        try:
            answer = await self.http.post(url, content=body, headers={
                "Content-Type": "application/json", "X-Max-Bot-Api-Secret": WEBHOOK_SECRET})
            return str(answer.status_code)
        except httpx.TimeoutException:
            return "timeout"
        except httpx.HTTPError as exc:
            return type(exc).__name__

    async def deliver(self, update: dict[str, Any], first: int | None = None) -> Delivery:
        """Until a 200: each retry goes to the next replica, waiting 0.25 s, 0.5 s, ... up to the cap between."""
        body = msgspec.json.encode(update)
        record = Delivery()
        size = len(self.cluster.replicas)
        # Round robin, so every replica has turns in flight whenever a few users are active.
        replica = next(self._next) % size if first is None else first
        wait, stop = 0.25, time.monotonic() + self.deadline
        while time.monotonic() < stop:
            answer = await self.post(replica, body)
            record.attempts.append((replica, answer, time.time()))
            if answer == "200":
                record.delivered = True
                return record
            self.non_200 += 1
            self.redelivered += 1
            await asyncio.sleep(wait)
            wait = min(wait * 2, self.backoff_cap)
            replica = (replica + 1) % size
        return record

    async def deliver_copies(self, update: dict[str, Any], copies: int) -> Delivery:
        """The same update (same mid) to `copies` different replicas at once, as a retrying MAX may."""
        if copies == 1:
            return await self.deliver(update)
        start = random.randrange(len(self.cluster.replicas))
        done = await asyncio.gather(*(self.deliver(update, (start + i) % len(self.cluster.replicas))
                                      for i in range(copies)))
        merged = Delivery(delivered=any(d.delivered for d in done))
        for d in done:
            merged.attempts.extend(d.attempts)
        return merged

    async def close(self) -> None:
        await self.http.aclose()


@dataclass
class Received:
    """A reply as the user saw it: text, when MAX took it, and whether the sender could know it went."""

    text: str
    at: float
    unknown: bool  # the caller hung up, or the connection was cut, after MAX had taken the message


class Inbox:
    """Watches the fake MAX and keeps, per user, the messages that reached them in the order MAX took them."""

    def __init__(self, fake: FakeMax | FakeMaxProcess, bot: str, users: set[int]) -> None:
        self.fake = fake
        self.key = bot_key(bot_token(bot))
        self.users = users
        self.by_user: dict[int, list[Received]] = {u: [] for u in users}
        self.changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def refresh(self) -> None:
        fresh: dict[int, list[Received]] = {u: [] for u in self.users}
        for call in self.fake.calls:
            if (call["path"] != "/messages" or call["method"] != "POST" or call["status"] != 200
                    or call["bot"] != self.key):
                continue
            query = call["query"]
            raw = query.get("chat_id") or query.get("user_id")
            user = int(raw) if raw and raw.lstrip("-").isdigit() else None
            if user in fresh:
                fresh[user].append(Received(call["json"].get("text") or "", call["answered"] or call["time"],
                                            bool(call["hung_up"] or call["dropped"] == "after")))
        for got in fresh.values():
            got.sort(key=lambda r: r.at)
        if fresh != self.by_user:
            self.by_user = fresh
            self.changed.set()

    async def _watch(self) -> None:
        while True:
            await asyncio.to_thread(self.refresh)
            await asyncio.sleep(0.1)

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        await asyncio.to_thread(self.refresh)

    async def wait_for(self, user: int, texts: Counter[str], timeout: float) -> bool:
        """Wait until every text of `texts` reached `user` as often as it is counted there; False on timeout.

        A person answers the question they were asked: a late second copy of an earlier reply (an unknown
        outcome resent) must not count as the answer to the step still on its way.
        """
        deadline = time.monotonic() + timeout
        while any(n > sum(r.text == text for r in self.by_user[user]) for text, n in texts.items()):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), min(left, 0.5))
            except TimeoutError:
                pass
        return True

    async def quiet(self, seconds: float, limit: float) -> None:
        """Wait until nothing new arrived for `seconds` (at most `limit` in all)."""
        deadline = time.monotonic() + limit
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            snapshot = sum(len(v) for v in self.by_user.values())
            if snapshot != last:
                last, since = snapshot, time.monotonic()
            elif time.monotonic() - since >= seconds:
                return
            await asyncio.sleep(0.1)


@dataclass
class Step:
    """One thing a user does and the replies it should bring (in order)."""

    updates: list[dict[str, Any]]  # more than one: sent all at once (parallel updates of one user)
    expected: list[str]
    idle: float = 0.0  # the user says nothing this long first (reminders and timeouts fall due)
    sent_at: float = 0.0
    deliveries: list[Delivery] = field(default_factory=list)


class Player:
    """A user who sends a step, waits (bounded) for its replies, then goes on."""

    def __init__(self, user: int, steps: list[Step]) -> None:
        self.user = user
        self.steps = steps
        self.at_step = 0  # how many steps were sent

    @property
    def expected(self) -> list[str]:
        return [text for step in self.steps for text in step.expected]

    async def play(self, hooks: Hooks, webhooks: Webhooks, inbox: Inbox, copies: int, patience: float,
                   delay: float = 0.0) -> None:
        """Like a person: answer as soon as the bot's replies show up, whatever MAX's deliveries are still doing."""
        await asyncio.sleep(delay)
        wanted: Counter[str] = Counter()
        delivering: list[tuple[Step, asyncio.Future[list[Delivery]]]] = []
        for index, step in enumerate(self.steps):
            await hooks.before(index)
            if step.idle:
                await asyncio.sleep(step.idle)
            step.sent_at = time.time()
            self.at_step = index + 1  # sent (a fault may wait for this)
            delivering.append((step, asyncio.gather(*(webhooks.deliver_copies(u, copies) for u in step.updates))))
            wanted.update(step.expected)
            await inbox.wait_for(self.user, wanted, patience)
        for step, task in delivering:  # each is bounded by the webhook deadline
            step.deliveries = list(await task)


class Hooks:
    """Lets an experiment hold every player before a given step, do its damage, then let them go on."""

    def __init__(self, players: int, pause_before: int | None) -> None:
        self.pause_before = pause_before
        self.waiting = 0
        self.players = players
        self.all_waiting = asyncio.Event()
        self.go = asyncio.Event()
        if pause_before is None:
            self.go.set()

    async def before(self, index: int) -> None:
        if index != self.pause_before:
            return
        self.waiting += 1
        if self.waiting >= self.players:
            self.all_waiting.set()
        await self.go.wait()

    async def arrived(self, timeout: float = 120.0) -> None:
        """Until every player waits at the pause."""
        await asyncio.wait_for(self.all_waiting.wait(), timeout)
