"""What a bot's page tells an operator: delivery, subscription, served version, rate, queue, recent errors.

Counts come from this replica's Prometheus counters: each view keeps a snapshot, so "the last hour" is
the difference to the oldest snapshot younger than an hour (or to zero since this replica started).
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from server.metrics import REGISTRY
from server.channels.max.client import MaxApiError
from web.i18n import N_
from web.i18n import gettext as _
from web.i18n import ngettext

HOUR = 3600.0
STARTED = time.time()
# Counter samples that count as errors for a bot, with the words the page puts after their count.
ERROR_SAMPLES: dict[tuple[str, str], Callable[[int], str]] = {
    ("botflow_replies_total", "refused"): lambda n: ngettext("reply MAX refused", "replies MAX refused", n),
    ("botflow_replies_total", "unknown_outcome"): lambda n: ngettext(
        "reply whose delivery is unknown", "replies whose delivery is unknown", n),
    ("botflow_replies_total", "retried"): lambda n: ngettext("reply to be sent again", "replies to be sent again", n),
    ("botflow_webhook_requests_total", "5xx"): lambda n: ngettext(
        "delivery MAX will repeat (this server answered with an error)",
        "deliveries MAX will repeat (this server answered with an error)", n),
}
SENT = ("botflow_replies_total", "sent")
GROUPS_IGNORED = ("botflow_updates_ignored_total", "group")
# MAX error codes in words, for the test-message answer (an operator reads them, not a program).
MAX_CODE_WORDS = {
    "verify.token": N_("the bot's token is not valid; set a new one in the settings"),
    "access.denied": N_("the bot may not write to this user; the user has to start a chat with the bot first"),
    "chat.denied": N_("the user has blocked the bot or never started a chat with it"),
    "not.found": N_("there is no MAX user or chat with this id"),
    "proto.payload": N_("MAX did not accept the message's content"),
    "too.many.requests": N_("MAX is asking to slow down; try again in a moment"),
    "timeout": N_("MAX did not answer in time"),
    "network": N_("MAX could not be reached"),
}


def _bot_counters(bot: str) -> dict[tuple[str, str], float]:
    values: dict[tuple[str, str], float] = {}
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            if sample.labels.get("bot") != bot or not sample.name.endswith("_total"):
                continue
            if sample.name == "botflow_replies_total":
                values[(sample.name, sample.labels.get("result", ""))] = sample.value
            elif sample.name == "botflow_updates_ignored_total":
                values[(sample.name, sample.labels.get("reason", ""))] = sample.value
            elif sample.name == "botflow_webhook_requests_total":
                status = sample.labels.get("status", "")
                key = "5xx" if status.startswith("5") else status
                values[(sample.name, key)] = values.get((sample.name, key), 0.0) + sample.value
    return values


@dataclass
class CounterHistory:
    """Snapshots of one bot's counters, at most one a minute, kept for an hour."""

    snapshots: deque[tuple[float, dict[tuple[str, str], float]]] = field(default_factory=deque)

    def last_hour(self, bot: str, now: float | None = None) -> tuple[dict[tuple[str, str], float], float]:
        """Counter increases over the last hour (or since start) and how many seconds that covers."""
        now = now or time.time()
        current = _bot_counters(bot)
        while self.snapshots and now - self.snapshots[0][0] > HOUR:
            self.snapshots.popleft()
        if not self.snapshots or now - self.snapshots[-1][0] >= 60:
            self.snapshots.append((now, current))
        since, base = (self.snapshots[0] if now - STARTED > HOUR else (STARTED, {}))
        return {k: v - base.get(k, 0.0) for k, v in current.items()}, now - since


class BotHealth:
    """Per-bot history for the pages of one replica."""

    def __init__(self) -> None:
        self.histories: dict[str, CounterHistory] = {}

    def summary(self, bot: str) -> dict[str, Any]:
        """Errors and traffic of the last hour in words and numbers, for the template."""
        deltas, covered = self.histories.setdefault(bot, CounterHistory()).last_hour(bot)
        counts = {key: int(deltas.get(key, 0)) for key in ERROR_SAMPLES}
        errors = [(ERROR_SAMPLES[key](n), n) for key, n in counts.items()]
        return {"errors": [(w, n) for w, n in errors if n], "error_total": sum(n for _words, n in errors),
                "sent": int(deltas.get(SENT, 0)), "groups_ignored": int(deltas.get(GROUPS_IGNORED, 0)), "minutes": max(1, round(covered / 60)),
                "whole_hour": covered >= HOUR - 60}


def subscription_words(health: Any, public_url: str | None, bot_id: str = "") -> tuple[str, str]:
    """(tag, sentence) describing the webhook subscription as the watchdog last saw it."""
    again = _("To subscribe again, whoever runs the server sets its public address (the setting "
              "BOTFLOW_PUBLIC_URL, and the server renews the subscription by itself) or runs “botflow max "
              "subscribe --bot %(bot)s --url https://<public address>”; while developing, “botflow poll” fetches "
              "the messages instead.") % {"bot": bot_id}
    if health is None:
        if not public_url:
            return "muted", _("This server has no public address, so it does not renew the subscription itself; "
                              "MAX's list of subscriptions is looked at about a minute after the server starts.")
        return "muted", _("Not checked yet; the first check runs shortly after the server starts.")
    ago = max(0, round((time.time() - health.checked_at) / 60))
    when = _("just now") if ago == 0 else _("%(n)s min ago") % {"n": ago}
    if health.refused:
        return "gone", _("This server's public address is not one MAX delivers to: MAX needs an https:// address "
                         "on port 443 at a host name with a certificate from a public authority (no IP address, "
                         "no other port). Checked %(when)s.") % {"when": when}
    if health.missing:
        return "gone", _("MAX no longer lists a webhook for this bot, so no messages reach it. Checked %(when)s.") % {
            "when": when} + " " + again
    if not health.up:
        return "error", _("MAX could not be asked (%(error)s); last try %(when)s.") % {
            "error": health.error or _("no answer"), "when": when}
    if health.resubscribed_at and time.time() - health.resubscribed_at < HOUR:
        return "warn", _("MAX had dropped the subscription; it was renewed. Checked %(when)s.") % {"when": when}
    if not public_url:
        return "ok", _("MAX delivers to %(url)s. Checked %(when)s.") % {"url": health.url, "when": when}
    return "ok", _("MAX delivers to this address. Checked %(when)s.") % {"when": when}


def max_answer_words(exc: MaxApiError | None, answer: dict[str, Any] | None) -> tuple[bool, str]:
    """(delivered, sentence) for the result of a test message."""
    if exc is None:
        return True, _("MAX accepted the message; it is on its way to the user.")
    words = MAX_CODE_WORDS.get(exc.code)
    detail = exc.message.split(": ", 1)[-1].strip()
    if words:
        said = (" " + _("MAX said: “%(detail)s”.") % {"detail": detail}) if detail and exc.status else ""
        return False, _("Not delivered: %(reason)s.") % {"reason": _(words)} + said
    return False, _("Not delivered: MAX said “%(detail)s”.") % {"detail": detail or _("no reason")}
