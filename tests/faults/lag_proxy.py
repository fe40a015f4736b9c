"""The Redis master's address for sentinels, replica and replicas alike, able to hold back replication alone."""
from __future__ import annotations

import asyncio

from tests.outage_proxy import OutageProxy


class LagProxy(OutageProxy):
    """Forwards everything; `hold()` stops the master's stream to its replica (the connection that sent
    REPLCONF or PSYNC) while every other connection goes on, so the replica falls behind. Sentinels check
    that a replica replicates from the master's address they know: behind this proxy both are its port,
    so they leave the replica where it is (with a proxy on the replica's side alone they point it back)."""

    def __init__(self, target_port: int) -> None:
        super().__init__(target_port)
        self.holding = False
        self._replication: set[int] = set()  # ids of the client readers that are replication links

    def hold(self) -> None:
        self.holding = True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
            self._writers.add(up_writer)
            link = id(reader)
            await asyncio.gather(self._up(reader, up_writer, link), self._down(up_reader, writer, link))
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            self._replication.discard(id(reader))
            writer.transport.abort()

    async def _up(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: int) -> None:
        try:
            while chunk := await reader.read(65536):
                if b"REPLCONF" in chunk.upper() or b"PSYNC" in chunk.upper():
                    self._replication.add(link)
                writer.write(chunk)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.transport.abort()

    async def _down(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: int) -> None:
        try:
            while chunk := await reader.read(65536):
                if self.holding and link in self._replication:
                    continue  # dropped: the replica never hears of these writes
                writer.write(chunk)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.transport.abort()
