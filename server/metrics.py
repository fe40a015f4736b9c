"""The deployment's Prometheus metrics: one registry, one name per thing an operator watches."""
from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

from server.hot_metrics import HotCounter, HotHistogram

REGISTRY = CollectorRegistry(auto_describe=True)


class Children:
    """A labelled metric's children, each looked up once: `labels()` takes a lock and builds a key on every
    call, and the hot path counts on every update. `children(*values)` is `metric.labels(*values)`."""

    __slots__ = ("metric", "found")

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.found: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        child = self.found.get(values)
        if child is None:
            child = self.found[values] = self.metric.labels(*values)
        return child


# Webhooks reach us on the ASGI fast path as well as through Litestar: both count here.
WEBHOOK_REQUESTS = HotCounter("botflow_webhook_requests", "MAX webhook deliveries answered, by HTTP status",
                              ["bot", "status"], registry=REGISTRY)
UPDATES_IGNORED = Counter("botflow_updates_ignored", "Deliveries acknowledged and not used, by why (group: a group"
                          " chat or channel; no_message, no_sender, from_bot, unused_type, unreadable)",
                          ["bot", "reason"], registry=REGISTRY)
DUPLICATE_DELIVERIES = Counter("botflow_duplicate_deliveries", "Updates recognised as a repeated delivery",
                               ["bot"], registry=REGISTRY)
TURN_SECONDS = HotHistogram("botflow_turn_seconds", "One turn: lock, load, engine step and commit",
                            ["kind", "outcome"], registry=REGISTRY,
                            buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5))
LOCK_BUSY = Counter("botflow_lock_busy", "Turns that found the user's lock held by another turn", registry=REGISTRY)
TURNS_RESTEPPED = Counter(
    "botflow_turns_restepped", "Turns that read a dialog unlocked and stepped again because it had changed "
    "meanwhile (another replica's turn, an expiry, an erasure)", registry=REGISTRY)
LOCK_WAIT_SECONDS = Histogram("botflow_lock_wait_seconds", "Time a turn waited for the user's lock",
                              registry=REGISTRY, buckets=(.001, .005, .01, .05, .1, .5, 1, 2, 5, 10))

REPLY_SEND_SECONDS = HotHistogram("botflow_reply_send_seconds", "One call to MAX, from request to answer",
                                  ["op"], registry=REGISTRY,
                                  buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60))
REPLIES = HotCounter("botflow_replies", "Calls to MAX by result: sent, refused (final), retried, unknown_outcome",
                     ["bot", "result"], registry=REGISTRY)
ACTIONS = Counter("botflow_actions", "Webhook actions by result: sent, refused (final), retried, blocked",
                  ["result"], registry=REGISTRY)
RATE_LIMIT_WAIT_SECONDS = Counter("botflow_rate_limit_wait_seconds", "Time sends waited for the bot's rate",
                                  ["bot"], registry=REGISTRY)

OUTBOX_DEPTH = Gauge("botflow_outbox_depth", "Users with replies or actions waiting to be sent (sampled)",
                     registry=REGISTRY)
OUTBOX_OLDEST_SECONDS = Gauge("botflow_outbox_oldest_seconds", "Age of the oldest waiting outbox entry (sampled)",
                              registry=REGISTRY)
TIMER_LAG_SECONDS = Histogram("botflow_timer_lag_seconds", "How late a reminder or timeout fired after it was due",
                              registry=REGISTRY, buckets=(.1, .25, .5, 1, 2, 5, 10, 30, 60, 300))
DIALOGS = Gauge("botflow_dialogs", "Running dialogs per bot and version (sampled)", ["bot", "version"],
                registry=REGISTRY)

STORE_ERRORS = Counter("botflow_store_errors", "Dialog store (Redis or SQL) calls that failed", ["store"],
                       registry=REGISTRY)
DATABASE_ERRORS = Counter("botflow_database_errors", "Database calls that failed or timed out", registry=REGISTRY)
CLOCK_OFFSET_SECONDS = Gauge("botflow_clock_offset_seconds",
                             "The dialog store's clock minus this host's (measured; every time written uses it)",
                             registry=REGISTRY)
STORE_LOST = Counter("botflow_store_lost", "Times the dialog store was found to have lost dialogs (reason: "
                     "restarted_empty, a Redis without its epoch record; rewound, a dialog older than this "
                     "replica wrote it)", ["reason"], registry=REGISTRY)
DIALOGS_LOST = Counter("botflow_dialogs_lost", "Running dialogs the store lost or rewound: the user was told and "
                       "started again", ["reason"], registry=REGISTRY)
STORE_LOST_AT = Gauge("botflow_store_lost_at_seconds", "When (the store's clock) the dialog store was last found "
                      "to have lost dialogs; 0 never", registry=REGISTRY)
DEPENDENCY_UP = Gauge("botflow_dependency_up", "1 when the dependency answered /readyz's check at the last scrape, "
                      "else 0 (database; redis, or dialog_store without Redis)", ["dependency"], registry=REGISTRY)
MAX_RATE_LIMITED = Counter("botflow_max_rate_limited", "Calls MAX answered 429 (too many requests), by bot",
                           ["bot"], registry=REGISTRY)
SUBSCRIPTION_UP = Gauge("botflow_subscription_up", "1 when MAX lists the bot's webhook subscription, else 0",
                        ["bot"], registry=REGISTRY)

BUILD = Info("botflow_build", "Version of the running server", registry=REGISTRY)
