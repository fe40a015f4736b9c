"""One bot's running dialogs per version and users with replies waiting, for the bot's page (capped walk)."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from server.runtime.stores.ports import DialogStore

SAMPLE_CAP = 2_000  # dialogs read per pass at most


@dataclass(slots=True)
class BotCounts:
    """One bot's running dialogs per version and users with replies waiting, from up to `cap` dialogs."""

    dialogs: Counter[str] = field(default_factory=Counter)
    waiting: int = 0
    oldest: float = 0.0  # age in seconds of the oldest waiting entry that says when it was made
    read: int = 0
    complete: bool = True  # False when the cap stopped the walk


async def bot_counts(store: DialogStore, bot: str, cap: int = SAMPLE_CAP) -> BotCounts:
    """Walk a bot's dialogs, then its users with sends queued, through the store interface, reading at
    most `cap` of each (replies of a dialog that has ended since still wait to be sent)."""
    counts, wall, queued = BotCounts(), time.time(), 0
    async for user in store.users(bot):
        if counts.read >= cap:
            counts.complete = False
            break
        counts.read += 1
        dialog = await store.dialog(bot, user)
        if dialog is not None:
            counts.dialogs[str(dialog.get("version") or "")] += 1
    async for user in store.outbox_users(bot):
        if queued >= cap:
            counts.complete = False
            break
        queued += 1
        head = await store.outbox_head(bot, user)
        if head is not None:
            counts.waiting += 1
            created = head.get("created")
            if isinstance(created, int | float):
                counts.oldest = max(counts.oldest, wall - created)
    return counts
