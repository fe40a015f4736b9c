"""The runtime's HTTP client when servers misbehave: no silent resend, capped bodies, no header injection."""
from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import Awaitable, Callable

import httpx
import pytest

from server.channels.transport import AnswerTimeout, LeanClient, OutcomeUnknown, UnsafeRequest

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
Handler = Callable[[int, bytes, asyncio.StreamWriter], Awaitable[bool]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


class Scripted:
    """A loopback HTTP server: `handler(n, request, writer)` answers request n; False hangs up."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[bytes] = []
        self.connections = 0
        self.ended = 0  # connections whose client went away
        self.server: asyncio.AbstractServer | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                request = await read_request(reader)
                self.requests.append(request)
                if not await self.handler(len(self.requests), request, writer):
                    break
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.ended += 1
        finally:
            writer.transport.abort()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]

    async def __aenter__(self) -> Scripted:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()  # type: ignore[union-attr]


async def test_a_post_whose_connection_breaks_after_sending_is_unknown_and_never_resent() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        if n == 1:
            writer.write(OK)
            return True
        return False  # read the second request, then hang up without a word

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        assert (await client.request("POST", server.url + "/messages", content=b"{}")).status_code == 200
        with pytest.raises(OutcomeUnknown) as unknown:
            await client.request("POST", server.url + "/messages", content=b'{"text":"hi"}')
        assert isinstance(unknown.value, httpx.TransportError)
        assert OutcomeUnknown.__doc__ == "The request was written but no answer came: the call may or may not have happened."
        await asyncio.sleep(0.1)
        assert len(server.requests) == 2 and server.connections == 1  # not sent again on a fresh connection
        await client.aclose()


async def test_an_idempotent_call_on_a_dead_kept_alive_connection_is_tried_once_more() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        if n == 2:
            return False
        writer.write(OK)
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        await client.request("GET", server.url + "/me")
        assert (await client.request("GET", server.url + "/me")).content == b"ok"
        assert len(server.requests) == 3 and server.connections == 2
        await client.aclose()


async def test_a_connection_the_server_closed_while_idle_is_not_used() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK)
        return False  # answer, then close the kept-alive connection

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        for _ in range(3):
            assert (await client.request("POST", server.url + "/messages", content=b"{}")).status_code == 200
            await asyncio.sleep(0.05)  # the close reaches the client while the connection is idle
        assert len(server.requests) == 3 and server.connections == 3
        await client.aclose()


async def test_idle_connections_older_than_the_expiry_are_replaced() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK)
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3, idle_expiry=0.1)
        await client.request("GET", server.url + "/a")
        await client.request("GET", server.url + "/a")
        await asyncio.sleep(0.2)
        await client.request("GET", server.url + "/a")
        assert server.connections == 2
        await client.aclose()


def test_a_post_that_could_not_be_written_goes_once_on_a_fresh_connection() -> None:
    """The pooled connection was reset before the request left: nothing reached the server, so it is resent."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    got: list[bytes] = []
    reset = threading.Event()

    def serve() -> None:
        first, _ = listener.accept()
        got.append(first.recv(65536))
        first.sendall(OK)
        reset.wait(5)
        first.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        first.close()  # RST: the client's next send on it fails at once
        reset.clear()
        second, _ = listener.accept()
        got.append(second.recv(65536))
        second.sendall(OK)
        second.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    async def scenario() -> int:
        client = LeanClient(timeout=3)
        await client.request("POST", f"http://127.0.0.1:{port}/messages", content=b"{}")
        reset.set()
        while reset.is_set():  # block the loop, so it cannot notice the reset before the write
            pass
        time.sleep(0.05)
        answer = await client.request("POST", f"http://127.0.0.1:{port}/messages", content=b'{"n":2}')
        await client.aclose()
        return answer.status_code

    assert asyncio.run(scenario()) == 200
    thread.join(5)
    listener.close()
    assert len(got) == 2 and got[1].endswith(b'{"n":2}')


async def test_a_server_that_holds_the_call_past_the_timeout_is_an_unknown_outcome() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(2)
        return False

    async with Scripted(handler) as server:
        client = LeanClient(timeout=0.3)
        with pytest.raises(AnswerTimeout) as late:
            await client.request("POST", server.url + "/messages", content=b"{}")
        assert isinstance(late.value, OutcomeUnknown) and isinstance(late.value, httpx.TimeoutException)
        assert len(server.requests) == 1
        await client.aclose()


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b"x" * 5000,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"400\r\n" + b"x" * 1024 + b"\r\n" for _ in range(5)) + b"0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * 5000,
], ids=["length", "chunked", "until-close"])
async def test_an_answer_larger_than_the_cap_is_refused(answer: bytes) -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(answer)
        return False

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3, max_body=4096)
        with pytest.raises(httpx.RemoteProtocolError, match="larger than 4096"):
            await client.request("GET", server.url + "/me")
        await client.aclose()


@pytest.mark.parametrize("answer", [
    b"SSH-2.0-OpenSSH\r\n\r\n", b"HTTP/1.1 2xx Fine\r\n\r\n", b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
], ids=["not-http", "bad-status", "no-colon", "negative-length", "bad-chunk"])
async def test_a_malformed_answer_is_a_protocol_error(answer: bytes) -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(answer)
        return False

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        with pytest.raises(httpx.RemoteProtocolError):
            await client.request("GET", server.url + "/me")
        await client.aclose()


async def test_an_answer_arriving_byte_by_byte_is_read_whole() -> None:
    answer = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n"
              b"4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n")

    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        for i in range(len(answer)):
            writer.write(answer[i : i + 1])
            await writer.drain()
            await asyncio.sleep(0)
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        response = await client.request("GET", server.url + "/me")
        assert response.json() == {"a": 1} and response.headers["x-a"] == "b"
        assert (await client.request("GET", server.url + "/me")).json() == {"a": 1}
        assert server.connections == 1
        await client.aclose()


@pytest.mark.parametrize("headers,path", [
    ({"Authorization": "token\r\nX-Evil: 1"}, "/messages"),
    ({"Authorization": "token\nX-Evil: 1"}, "/messages"),
    ({"Bad Name": "x"}, "/messages"),
    ({}, "/messages HTTP/1.1\r\nX-Evil: 1\r\n"),
])
async def test_header_injection_is_refused_before_anything_is_sent(headers: dict, path: str) -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK)
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        with pytest.raises(UnsafeRequest):
            await client.request("POST", server.url + path, content=b"{}", headers=headers)
        assert server.connections == 0
        await client.aclose()
    async with httpx.AsyncClient(transport=client.pool) as plain:
        with pytest.raises(UnsafeRequest):
            await plain.get("http://127.0.0.1:1/x", headers={"X-A": "a\x00b"})


async def test_a_request_the_server_never_reads_is_a_write_timeout_not_an_unknown_outcome() -> None:
    async def never_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3)
        writer.transport.abort()

    server = await asyncio.start_server(never_read, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = LeanClient(timeout=0.5)
    try:
        with pytest.raises(httpx.WriteTimeout) as stuck:
            await client.request("POST", f"http://127.0.0.1:{port}/messages", content=b"x" * (64 << 20))
        assert not isinstance(stuck.value, OutcomeUnknown)  # the server never had the whole request
    finally:
        await client.aclose()
        server.close()


async def test_bytes_after_an_answer_retire_its_connection() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK + (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno" if n == 1 else b""))
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        assert (await client.request("GET", server.url + "/a")).content == b"ok"
        await asyncio.sleep(0.05)
        assert (await client.request("GET", server.url + "/a")).content == b"ok"  # not the stray "no"
        assert server.connections == 2
        await client.aclose()


async def test_an_answer_to_head_ends_with_its_headers() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")  # the length of the body GET would get
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        answer = await client.request("HEAD", server.url + "/a")
        assert (answer.status_code, answer.content) == (200, b"")
        await client.aclose()


async def test_an_answer_with_endless_headers_is_a_protocol_error() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"v" * 900) for i in range(200)))
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        with pytest.raises(httpx.RemoteProtocolError, match="head is larger"):
            await client.request("GET", server.url + "/a")
        await client.aclose()


async def test_a_cancelled_call_closes_its_connection() -> None:
    async def handler(n: int, request: bytes, writer: asyncio.StreamWriter) -> bool:
        if n == 1:
            await asyncio.sleep(1)  # the first call is cancelled while this answer is still on its way
        writer.write(OK)
        return True

    async with Scripted(handler) as server:
        client = LeanClient(timeout=3)
        call = asyncio.create_task(client.request("POST", server.url + "/messages", content=b"{}"))
        await asyncio.sleep(0.1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert (await client.request("GET", server.url + "/me")).content == b"ok"
        assert server.connections == 2  # the cancelled call's connection was not handed to the next one
        await asyncio.sleep(1.2)  # the late answer is written; then the server reads on
        assert server.ended == 1, "the cancelled call's connection was closed, not left open"
        await client.aclose()
