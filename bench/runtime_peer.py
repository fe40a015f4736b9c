"""The runtime as a peer of the registration-5 benchmark: MAX updates through the live dispatch path."""
from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import replace
from typing import Any

import msgspec

from server.runtime.dispatch import Dispatcher
from server.runtime.keys import Keys
from server.runtime.lifecycle import tune_gc
from server.runtime.outbox import Outbox
from server.channels.ratelimit import RateLimiter
from server.runtime.stores.redis import RedisStore
from server.runtime.arms import Arms
from server.runtime.catalog import BotInfo, Catalog
from server.channels.max.updates import parse_update

PREFIX = "bench:botflow"
BOT = BotInfo("bench", "bench-token", "bench-secret", "registration5", 1)
# BENCH_EXPERIMENT=on: an A/B experiment runs on the bot, between versions 1 and 2 (the same document), goal
# "confirmed", so every new dialog is dealt an arm and its opening and arrival are counted (`--experiment-cost`).
ARMS = Arms.of(1, "registration5", [{"version": 1, "weight": 1}, {"version": 2, "weight": 1}], "confirmed")


def bench_bot() -> BotInfo:
    """The benchmark's bot, with the experiment running when BENCH_EXPERIMENT=on."""
    return replace(BOT, arms=ARMS) if os.environ.get("BENCH_EXPERIMENT") == "on" else BOT


def flow_document(workload: Any) -> dict[str, Any]:
    """The benchmark's five-step registration (texts and rules from workload.py) as a flow document."""
    return {
        "format": "botflow/v1", "id": "registration5", "title": "Registration-5", "start": "awaiting_name",
        "settings": {"session_ttl": 1800},
        "commands": {"cancel": {"match": ["/cancel"], "reply": workload.CANCELLED}, "restart": {"match": ["/start"]}},
        "states": [
            {"id": "awaiting_name", "say": [{"text": workload.GREETING}],
             "input": {"type": "text", "save_as": "name", "min_length": 2, "max_length": 80,
                       "error": workload.BAD_NAME}},
            {"id": "awaiting_phone", "say": [{"text": workload.ASK_PHONE}],
             "input": {"type": "regex", "pattern": workload.PHONE_RE.pattern, "save_as": "phone",
                       "error": workload.BAD_PHONE}},
            {"id": "awaiting_email", "say": [{"text": workload.ASK_EMAIL}],
             "input": {"type": "email", "save_as": "email", "error": workload.BAD_EMAIL}},
            {"id": "awaiting_pdn", "say": [{"text": workload.ASK_PDN}]},
            {"id": "confirmed", "final": True, "say": [{"text": workload.CONFIRMED}]},
            {"id": "refused", "final": True, "say": [{"text": workload.REFUSED}]},
        ],
        "transitions": [
            {"id": "name_ok", "from": "awaiting_name", "to": "awaiting_phone", "on": "input"},
            {"id": "phone_ok", "from": "awaiting_phone", "to": "awaiting_email", "on": "input"},
            {"id": "email_ok", "from": "awaiting_email", "to": "awaiting_pdn", "on": "input"},
            {"id": "pdn_yes", "from": "awaiting_pdn", "to": "confirmed", "on": "text", "match": list(workload.YES)},
            {"id": "pdn_no", "from": "awaiting_pdn", "to": "refused", "on": "else"},
        ],
    }


def make_raw(user_id: int, seq: int, text: str) -> dict[str, Any]:
    """The MAX message_created update a webhook would receive."""
    return {"update_type": "message_created", "timestamp": 1_785_182_044_286 + seq,
            "message": {"sender": {"user_id": user_id, "first_name": "User", "is_bot": False},
                        "recipient": {"chat_id": user_id, "chat_type": "dialog"},
                        "timestamp": 1_785_182_044_286 + seq,
                        "body": {"mid": f"mid.{seq:024x}", "seq": seq, "text": text}}}


class Peer:
    """bench.py's peer interface over Dispatcher.handle with the Redis store and a recording sender."""

    name = "botflow"
    # Every key but the epoch record (`stores.lost`): the driver deletes the keys between warm-up and the
    # measured run, which to a running replica is a Redis that lost its data (it says so and pauses new
    # dialogs while the replicas compare notes); a measured run is the steady state, not that event.
    key_patterns = (PREFIX + ":v1:[^e]*", PREFIX + ":v1:e[^p]*")

    def __init__(self, redis_url: str, ttl: int, workload: Any, serve_gc: bool = True) -> None:
        self.redis_url = redis_url
        self.serve_gc = serve_gc
        self.document = flow_document(workload)
        if ttl:
            self.document["settings"]["session_ttl"] = ttl
        self.replies: dict[int, list[str]] = defaultdict(list)
        self.confirmed = 0

    @property
    def library(self) -> str:
        return ("botflow runtime (Redis store, commit-first: lock+dedupe+load (none when this process wrote the "
                "dialog last: the commit checks it), save+timeline+mark+timer+outbox, then per reply the outbox "
                "ack, which reserves the next send's shared rate slot; "
                + ("the collector set as `botflow serve` sets it)" if self.serve_gc else "the default collector)"))

    async def setup(self) -> None:
        bot = bench_bot()
        versions = {BOT.version} if bot.arms is None else set(bot.arms.versions)

        async def load_bot(bot_id: str) -> BotInfo | None:
            return bot if bot_id == BOT.id else None

        async def load_document(flow_id: str, version: int) -> dict[str, Any] | None:
            return self.document if flow_id == BOT.flow_id and version in versions else None

        async def send(bot: BotInfo, item: dict[str, Any]) -> None:
            if item["op"] == "send":
                self.replies[item["chat_id"]].append(item["text"])

        self.store = RedisStore(self.redis_url, prefix=PREFIX, send_rate=1_000_000)
        catalog = Catalog(load_bot, load_document)
        # As in production: replies are committed with the turn, then sent under the bot's shared rate.
        limiter = RateLimiter(1_000_000, redis=self.store.client, prefix=Keys(PREFIX).rate)
        self.outbox = Outbox(self.store, catalog, send, None, limiter)  # type: ignore[arg-type]
        self.dispatcher = Dispatcher(self.store, catalog, self.outbox)
        if self.serve_gc:
            tune_gc()  # as `botflow serve` does once it has started

    def reset_counters(self) -> None:
        self.replies.clear()
        self.confirmed = 0

    def make_raw(self, user_id: int, seq: int, text: str) -> Any:
        return msgspec.json.encode(make_raw(user_id, seq, text))  # as a webhook receives it

    async def parse(self, raw: Any) -> Any:
        # The driver's input conversion, as the other peers' (the seed's takes (from.id, text) from a dict):
        # before the clock starts unless --parse-in-window, where it is the webhook body's decoding and parsing.
        return parse_update(msgspec.json.decode(raw))

    async def feed(self, incoming: Any) -> None:
        bot = await self.dispatcher.catalog.bot(BOT.id)
        result = await self.dispatcher.handle(bot, incoming)
        if result is not None and result.completed is not None and result.completed.state == "confirmed":
            self.confirmed += 1

    async def get_state(self, user_id: int) -> str:
        stored = await self.store.dialog(BOT.id, str(user_id))
        return stored["state"] if stored is not None else "idle"

    async def close(self) -> None:
        await self.store.close()
