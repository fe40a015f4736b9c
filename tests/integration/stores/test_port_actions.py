"""Webhook actions (`ports.Actions`): claimed when due, retried, forgotten; run on every store kind."""
from __future__ import annotations

import uuid


from server.runtime.stores import DialogStore, TurnCommit
from tests.integration.stores.suite import dialog, save


async def test_webhook_actions_are_claimed_retried_and_forgotten(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    action = {"id": uuid.uuid4().hex, "bot": bot, "url": "http://127.0.0.1:9/x", "data": {"a": 1}}
    await save(store, bot, "8", TurnCommit(dialog("s"), actions=[action]))
    mine = lambda claimed: [a for a in claimed if a.get("bot") == bot]  # noqa: E731
    assert mine(await store.actions_due(now + 1, lease=30)) == [action]
    assert mine(await store.actions_due(now + 2, lease=30)) == []
    await store.action_later({**action, "attempts": 1}, now + 40)
    assert mine(await store.actions_due(now + 39, lease=30)) == []
    assert mine(await store.actions_due(now + 41, lease=30)) == [{**action, "attempts": 1}]
    await store.action_done(action["id"])
    assert mine(await store.actions_due(now + 10_000, lease=30)) == []
