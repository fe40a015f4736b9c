"""A loopback TCP proxy that can forward, black-hole or refuse, to play a database outage in tests."""
from __future__ import annotations

import asyncio
import socket
import threading
from typing import Literal

Mode = Literal["forward", "blackhole", "closed"]


class OutageProxy:
    """`with OutageProxy(5432) as proxy: proxy.set("blackhole")`; `proxy.port` is where clients connect.

    forward: bytes pass both ways. blackhole: connections are accepted (new and open ones alike) and
    nothing is ever answered, like a server behind a dropped route. closed: nothing listens on the port,
    and open connections are cut, like a stopped server.
    """

    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.mode: Mode = "forward"
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="outage-proxy", daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def __enter__(self) -> OutageProxy:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._thread.start()
        self._call(self._listen())
        return self

    def __exit__(self, *exc: object) -> None:
        self._call(self._shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def set(self, mode: Mode) -> None:
        """Switch mode; takes effect for open connections too."""
        self._call(self._switch(mode))

    def _call(self, coro: object) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)  # type: ignore[arg-type]

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _shutdown(self) -> None:
        await self._close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _switch(self, mode: Mode) -> None:
        previous, self.mode = self.mode, mode
        if mode == "closed":
            await self._close()
        elif previous == "closed":
            await self._listen()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while self.mode == "blackhole":
                await asyncio.sleep(0.05)
            up_reader, up_writer = await asyncio.open_connection(*self.target)
            self._writers.add(up_writer)
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        except (OSError, asyncio.CancelledError):  # cancelled: the proxy is closing; end quietly
            pass
        finally:
            writer.transport.abort()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while chunk := await reader.read(65536):
                while self.mode == "blackhole":  # hold the bytes: the peer hears nothing
                    await asyncio.sleep(0.05)
                writer.write(chunk)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.transport.abort()
            self._writers.discard(writer)
