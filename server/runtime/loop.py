"""The background loop the outbox and the timers share."""
from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable


async def repeat(name: str, pass_once: Callable[[], Awaitable[object]], interval: float,
                 log: logging.Logger) -> None:
    """Run `pass_once` every `interval` seconds until cancelled (what a pass returns is not used).

    A failing pass (a storage hiccup) is logged once per outage, not every pass, and its end is logged too;
    what the pass did not finish is picked up by the next one.
    """
    failing = False
    while True:
        try:
            await pass_once()
            if failing:
                log.warning("%s run again", name)
            failing = False
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - any failure: retry on the next pass
            if not failing:
                log.warning("%s pass failed; retrying quietly until it works", name, exc_info=True)
            failing = True
        await asyncio.sleep(interval)
