"""Webhook actions a turn queued: POSTed when due, retried with backoff for up to a day, then dropped."""
from __future__ import annotations

import logging
import random
import time
from typing import Any, Awaitable, Callable

import httpx

from server import metrics
from server.egress import ActionReply, EgressRefused
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.ports import Actions

log = logging.getLogger("botflow.runtime.outbox")  # the name operators' log filters already know

GIVE_UP = 24 * 3600.0  # replies and actions older than this are dropped (and logged)


def backoff(attempts: int) -> float:
    """Seconds before the next attempt: 1, 2, 4 ... capped at 5 minutes, with jitter."""
    return min(300.0, 2.0 ** max(0, attempts - 1)) * random.uniform(0.8, 1.2)


async def deliver(store: Actions, post: Callable[[str, Any], Awaitable[ActionReply]], item: dict[str, Any],
                  held: float, clock: Callable[[], float]) -> None:
    """POST the dialog data to the action's URL; retried with backoff for up to a day. `held`: until
    when (time.monotonic()) the claim on it is this replica's; past that it is left to the next claimer."""
    if time.monotonic() >= held:
        log.warning("webhook action to %s not posted: its claim lapsed before its turn came (a pause)",
                    item["url"], extra={"event": "action_fenced", "bot": item.get("bot"), "outcome": "fenced"})
        return
    blocked = False
    try:
        response = await post(item["url"], item["data"])
        if response.status_code < 300:
            metrics.ACTIONS.labels(result="sent").inc()
            await store.action_done(item["id"])
            return
        permanent = 400 <= response.status_code < 500 and response.status_code not in (408, 425, 429)
        problem = f"HTTP {response.status_code}"
    except EgressRefused as exc:  # an internal address stays internal: retrying cannot help
        permanent, problem, blocked = True, str(exc), True
    except httpx.HTTPError as exc:
        permanent, problem = False, f"{type(exc).__name__}: {exc}"
    except StoreUnavailable:
        return  # the claim comes back after ACTION_LEASE
    except Exception as exc:  # noqa: BLE001 - a post that cannot even be attempted (an unusable URL):
        permanent, problem = True, f"it cannot be sent: {type(exc).__name__}: {exc}"  # retrying cannot help
    item["attempts"] = item.get("attempts", 0) + 1
    try:
        if permanent or clock() - item.get("created", clock()) > GIVE_UP:
            metrics.ACTIONS.labels(result="blocked" if blocked else "refused").inc()
            log.warning("webhook action to %s abandoned after %d attempts (%s)", item["url"], item["attempts"],
                        problem, extra={"event": "action", "bot": item.get("bot"), "outcome": "refused"})
            await store.action_done(item["id"])
            return
        metrics.ACTIONS.labels(result="retried").inc()
        await store.action_later(item, clock() + backoff(item["attempts"]))
    except StoreUnavailable:
        pass  # the claim comes back after ACTION_LEASE
