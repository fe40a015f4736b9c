"""The protocol around uvicorn's: it passes every byte on, coalesces an answer's writes, and times requests out."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server import read_deadline
from server.read_deadline import guarded


class Transport(asyncio.Transport):
    """What the event loop would hand the protocol: records writes and closing."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 5000) if name == "peername" else default


class Inner(asyncio.Protocol):
    """Stands for uvicorn's protocol: answers each complete request in two writes, as uvicorn does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.received = b""
        self.transport: Any = None
        self.lost = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.received += data
        if self.received.endswith(b"\r\n\r\n"):
            self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
            self.transport.write(b"{}")

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


async def opened(cap: int = 10) -> tuple[Any, Transport]:
    protocol = guarded(Inner, cap)(_loop=asyncio.get_running_loop())
    transport = Transport()
    protocol.connection_made(transport)
    return protocol, transport


async def test_every_byte_reaches_the_inner_protocol_and_an_answer_leaves_in_one_write() -> None:
    protocol, transport = await opened()
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    protocol.data_received(request[:10])
    protocol.data_received(request[10:])
    assert protocol.inner.received == request
    await asyncio.sleep(0)  # the loop pass ends: what it wrote goes out
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
    protocol.connection_lost(None)
    assert protocol.inner.lost


async def test_a_request_whose_head_stalls_gets_408_and_an_answered_one_is_only_closed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_deadline, "HEAD_SECONDS", 0.01)
    monkeypatch.setattr(read_deadline, "BODY_SECONDS", 0.01)
    monkeypatch.setattr(read_deadline, "SWEEP_EVERY", 0.01)
    protocol, transport = await opened()
    protocol.data_received(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
    await asyncio.sleep(0.05)
    assert transport.closed and transport.writes[0].startswith(b"HTTP/1.1 408")
    assert b"request_timeout" in transport.writes[0]

    protocol, transport = await opened()
    protocol.data_received(b"POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n")  # answered before its body came
    await asyncio.sleep(0.05)
    assert transport.closed and len(transport.writes) == 1 and transport.writes[0].startswith(b"HTTP/1.1 200")


async def test_past_the_cap_a_connection_is_refused_and_what_http_cannot_read_gets_json() -> None:
    first, _ = await opened(cap=1)
    second = type(first)(_loop=asyncio.get_running_loop())
    refused = Transport()
    second.connection_made(refused)
    assert refused.closed and refused.writes[0].startswith(b"HTTP/1.1 503")
    second.connection_lost(None)
    first.connection_lost(None)

    protocol, transport = await opened()
    protocol.data_received(b"GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert transport.closed and transport.writes[0].startswith(b"HTTP/1.1 400") and b"bad_request" in transport.writes[0]
    assert protocol.inner.received == b""  # the inner protocol never saw it
