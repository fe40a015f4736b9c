"""Webhook actions against real listeners: internal addresses refused unless allowed, answers capped, time bounded."""
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx
import pytest

from flows.egress import refused_host
from server.egress import RESPONSE_LIMIT, Allow, EgressRefused, post_action
from server.settings import Settings, SettingsError


@dataclass
class Listener:
    """A plain HTTP/1.1 server on 127.0.0.1 that records what it receives and answers `reply`."""

    reply: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    silent: bool = False
    received: list[bytes] = field(default_factory=list)
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        self.received.append(head + await reader.readexactly(length))
        if self.silent:
            await asyncio.sleep(30)
        writer.write(self.reply)
        await writer.drain()
        writer.close()


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    found = Listener()
    server = await asyncio.start_server(found.handle, "127.0.0.1", 0)
    found.port = server.sockets[0].getsockname()[1]
    try:
        yield found
    finally:
        server.close()


LOOPBACK = Allow.parse(["127.0.0.1"])


async def test_loopback_is_refused_by_default_in_every_spelling(listener):
    for host in ("127.0.0.1", "localhost", "127.1", "0x7f000001", "2130706433", "[::ffff:127.0.0.1]"):
        with pytest.raises(EgressRefused) as refused:
            await post_action(f"http://{host}:{listener.port}/hook", {"secret": "data"}, allow=Allow())
        assert "BOTFLOW_ACTION_ALLOW" in str(refused.value), host
    assert listener.received == []


async def test_metadata_private_and_odd_addresses_are_refused_before_connecting():
    for url in ("http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "http://192.168.0.1/",
                "http://[::1]/", "http://0.0.0.0/", "http://224.0.0.1/", "http://100.100.100.200/",
                "http://[fd00:ec2::254]/", "ftp://example.com/"):
        with pytest.raises(EgressRefused):
            await post_action(url, {}, allow=Allow(), timeout=2)


async def test_a_name_that_resolves_inside_is_refused_at_connect_time(listener):
    async def rebinding(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    with pytest.raises(EgressRefused) as refused:
        await post_action(f"http://hooks.example.com:{listener.port}/", {}, allow=Allow(), resolve=rebinding)
    assert "127.0.0.1 (a loopback address" in str(refused.value)
    assert listener.received == []
    assert refused_host("hooks.example.com") is None  # a name passes the literal check; the connect check decides


async def test_allowed_loopback_gets_the_data(listener):
    reply = await post_action(f"http://127.0.0.1:{listener.port}/hook", {"name": "Анна"}, allow=LOOPBACK)
    assert reply.status_code == 200 and reply.body == b"ok" and not reply.truncated
    head, _, body = listener.received[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /hook HTTP/1.1") and json.loads(body) == {"name": "Анна"}
    assert f"host: 127.0.0.1:{listener.port}".encode() in head.lower()
    by_name = await post_action(f"http://localhost:{listener.port}/", {}, allow=Allow.parse(["localhost"]))
    assert by_name.status_code == 200 and by_name.address in ("127.0.0.1", "::1")


async def test_the_answer_is_capped(listener):
    listener.reply = b"HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\nConnection: close\r\n\r\n" + b"x" * 1048576
    reply = await post_action(f"http://127.0.0.1:{listener.port}/", {}, allow=LOOPBACK)
    assert reply.truncated and len(reply.body) == RESPONSE_LIMIT


async def test_a_silent_server_times_out(listener):
    listener.silent = True
    with pytest.raises(httpx.TimeoutException):
        await post_action(f"http://127.0.0.1:{listener.port}/", {}, allow=LOOPBACK, timeout=0.5)


async def test_redirects_are_not_followed(listener):
    listener.reply = (b"HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n"
                      b"Connection: close\r\n\r\n")
    reply = await post_action(f"http://127.0.0.1:{listener.port}/", {}, allow=LOOPBACK)
    assert reply.status_code == 302 and len(listener.received) == 1


def test_the_allow_setting_is_checked():
    settings = Settings.from_env({"BOTFLOW_ACTION_ALLOW": "crm.internal, 10.0.0.0/8,127.0.0.1"})
    allow = Allow.parse(settings.action_allow)
    import ipaddress
    assert allow.permits("CRM.internal", ipaddress.ip_address("192.168.5.5"))
    assert allow.permits("other.internal", ipaddress.ip_address("10.1.2.3"))
    assert allow.permits("other.internal", ipaddress.ip_address("127.0.0.1"))
    assert not allow.permits("other.internal", ipaddress.ip_address("192.168.5.5"))
    with pytest.raises(SettingsError) as bad:
        Settings.from_env({"BOTFLOW_ACTION_ALLOW": "crm.internal,not a host!"})
    assert "BOTFLOW_ACTION_ALLOW" in str(bad.value) and "not a host!" in str(bad.value)


class ToLoopback:
    """An httpcore network backend whose every connection lands on one loopback port, as a rebinding
    resolver or a hostile network would arrange whatever address was asked for."""

    def __init__(self, port: int) -> None:
        import httpcore

        self.port, self.real = port, httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return await self.real.connect_tcp("127.0.0.1", self.port, timeout=timeout)

    async def sleep(self, seconds: float) -> None:
        await self.real.sleep(seconds)


async def test_the_address_actually_connected_to_is_checked_before_anything_is_sent(listener):
    import httpcore

    async def public(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    transport = httpx.AsyncHTTPTransport()
    transport._pool = httpcore.AsyncConnectionPool(network_backend=ToLoopback(listener.port))
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(EgressRefused) as refused:
            await post_action("http://hooks.example.com/", {"secret": "data"}, allow=Allow(), client=client,
                              resolve=public)
    assert "connected to 127.0.0.1" in str(refused.value)
    assert listener.received == []
