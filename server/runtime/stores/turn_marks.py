"""Turn high-water marks: after a failover, each replica tells the new master the turn numbers it committed.

A promoted replica that was behind holds dialogs older than some replica wrote them. Only that replica
knows (`LostWatch.turns`); the user's next update may reach another. So a replica that follows a failover
raises each such dialog's mark (`Keys.turn_mark`, raise-only, expiring with the dialog) on the new
master, and BEGIN reads the mark with the dialog in its one round trip: a dialog older than its mark was
rewound, whichever replica reads it. The turn after numbers itself past the mark and drops it.
"""
from __future__ import annotations

import asyncio
import logging

from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.lost import LostWatch
from server.runtime.stores.redis_conn import RedisConn
from server.runtime.stores.redis_scripts import TURN_MARK

log = logging.getLogger("botflow.runtime.store")

BATCH = 1000  # marks sent at once (pipelined on the one connection)
TRIES = 3  # a failover that is still settling may refuse the first attempts


async def publish_marks(conn: RedisConn, lost: LostWatch) -> int:
    """Raise the marks of the dialogs this process committed (not expired, this epoch); how many sent."""
    now, epoch = conn.clock(), lost.epoch
    marks = [(base, turn, expires) for base, (turn, expires, written_in, _) in list(lost.turns.items())
             if expires > now and written_in == epoch]
    for attempt in range(TRIES):
        try:
            for start in range(0, len(marks), BATCH):
                await asyncio.gather(*(
                    conn.run(TURN_MARK, [conn.keys.turn_mark(base)], [turn, int(expires * 1000)])
                    for base, turn, expires in marks[start:start + BATCH]))
            break
        except StoreUnavailable as exc:
            if attempt == TRIES - 1:
                log.warning("the turn marks of %d dialogs could not be given to the new Redis master: %s",
                            len(marks), exc, extra={"event": "turn_marks", "outcome": "failed"})
                return 0
            await asyncio.sleep(0.2)
    log.info("turn marks of %d dialogs given to the new Redis master", len(marks),
             extra={"event": "turn_marks", "outcome": "published"})
    return len(marks)
