"""The Redis store's health: ping, replica confirmation, Redis's own clock, lost data, gauges, closing."""
from __future__ import annotations

from server.runtime.stores import dialog_codec
from server.runtime.stores.base import NotReplicated, Sample, StoreUnavailable
from server.runtime.stores.lost import LostWatch
from server.runtime.stores.ports import Health
from server.runtime.stores.redis_conn import RedisConn
from server.runtime.stores.redis_scripts import OUTBOX_SAMPLE

# How long a turn waits for its Redis replicas (BOTFLOW_REDIS_MIN_REPLICAS) before its webhook answers 503:
# the turn stays saved, and MAX's redelivery of it is then a duplicate.
REPLICA_WAIT_MS = 1000


class RedisHealth(Health):
    """What the app asks of Redis itself rather than of any dialog."""

    name = "redis"

    def __init__(self, conn: RedisConn, lost: LostWatch, min_replicas: int = 0) -> None:
        self.conn = conn
        self.lost = lost
        # Replicas that must confirm a turn (WAIT) before its webhook answers 200 (`replicated`).
        self.min_replicas = min_replicas

    async def sample(self, dialogs: bool = True) -> Sample:
        found = Sample(0, None)
        for b in self.conn.keys.all:
            users, oldest = await self.conn.run(OUTBOX_SAMPLE, [b.outq], [b.base])
            found.outbox_users += int(users)
            if oldest and (found.outbox_oldest is None or float(oldest) < found.outbox_oldest):
                found.outbox_oldest = float(oldest)
        if dialogs:
            batch: list[bytes] = []
            async for key in self.conn.scan(self.conn.keys.base + "{*}:d"):
                batch.append(key)
                if len(batch) >= 500:
                    await self._count(batch, found)
                    batch = []
            await self._count(batch, found)
        return found

    async def _count(self, keys: list[bytes], found: Sample) -> None:
        """Add the dialogs under `keys` to the per-(bot, version) counts."""
        if not keys:
            return
        by_slot: dict[str, list[bytes]] = {}  # a cluster's MGET reads one slot: the keys by bucket
        for key in keys:
            by_slot.setdefault(self.conn.keys.of(self.conn.keys.parse_dialog(key.decode())[0]).base, []).append(key)
        for group in by_slot.values():
            for key, raw in zip(group, await self.conn.call("MGET", *group)):
                if raw is not None:
                    label = (self.conn.keys.parse_dialog(key.decode())[0], str(dialog_codec.decode(raw).get("version")))
                    found.dialogs[label] = found.dialogs.get(label, 0) + 1

    async def replicated(self) -> None:
        if self.min_replicas:
            confirmed = await self.conn.call("WAIT", self.min_replicas, REPLICA_WAIT_MS)
            if int(confirmed) < self.min_replicas:
                raise NotReplicated(f"{confirmed} of {self.min_replicas} Redis replicas confirmed the turn "
                                    f"within {REPLICA_WAIT_MS} ms")

    async def check_lost(self) -> None:
        await self.lost.check_epoch()

    def lost_at(self) -> float | None:
        return self.lost.lost_at

    async def server_time(self) -> float:
        seconds, micros = await self.conn.call("TIME")
        return int(seconds) + int(micros) / 1_000_000

    async def ping(self) -> None:
        try:
            await self.conn.client.call("PING")
        except StoreUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            raise StoreUnavailable(str(exc)) from exc

    async def close(self) -> None:
        await self.conn.client.close()
