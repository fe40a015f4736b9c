"""The pipelined Redis client: incremental parsing, set-up failures, broken servers, pipelining order."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.resp import Parser, ProtocolError, RedisError, RespClient, pack, parse
from tests.integration.runtime_support import REDIS_URL, redis_prefix  # noqa: F401 (fixture)

NESTED = (b"*4\r\n$5\r\nhello\r\n:-42\r\n*3\r\n$-1\r\n+OK\r\n*0\r\n-ERR boom\r\n"
          b"$0\r\n\r\n*-1\r\n")
NESTED_HEAD = [b"hello", -42, [None, b"OK", []]]


def test_a_reply_fed_one_byte_at_a_time_comes_out_whole_and_once() -> None:
    parser, out = Parser(), []
    for i in range(len(NESTED)):
        out += parser.feed(NESTED[i : i + 1])
    assert out[0][:3] == NESTED_HEAD
    assert isinstance(out[0][3], RedisError) and str(out[0][3]) == "ERR boom"  # an error inside an array
    assert out[1:] == [b"", None]
    assert parser.feed(b"") == []


def test_a_bulk_string_holding_crlf_and_resp_is_taken_by_its_length() -> None:
    tricky = b"*2\r\n$-1\r\n:1\r\n"
    data = b"$%d\r\n%s\r\n" % (len(tricky), tricky)
    parser, out = Parser(), []
    for i in range(0, len(data), 3):
        out += parser.feed(data[i : i + 3])
    assert out == [tricky]


def test_a_large_reply_in_small_packets_is_parsed_without_rereading() -> None:
    items = [b"x" * (i % 200) for i in range(20_000)]
    data = pack(tuple(items))  # an array of bulk strings, framed as a command is
    parser, out, fed = Parser(), [], 0
    for i in range(0, len(data), 1400):
        out += parser.feed(data[i : i + 1400])
        fed += 1
        # Parsed bytes are dropped as the reply grows: the reader never holds much more than is unread.
        assert parser.reader.len() <= 1400 + 200 + 1024 + 16
    assert out == [items] and fed > 1000
    assert parser.feed(b":1\r\n") == [1]  # and it is back at the start of a reply


def test_a_command_is_framed_as_bulk_strings_whatever_its_argument_types() -> None:
    assert pack(("SET", b"k\r\n", 7, 2.5, "Иван")) == (
        b"*5\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$1\r\n7\r\n$3\r\n2.5\r\n$8\r\n" + "Иван".encode() + b"\r\n")
    assert pack(("ECHO", True)) == b"*2\r\n$4\r\nECHO\r\n$4\r\nTrue\r\n"  # other types: their str()
    assert parse(pack(("GET", "x" * 70_000)))[0][1] == b"x" * 70_000
    # The store sends times as floats: each must arrive as its repr(), the shortest text that reads back exact.
    times = (1785182044.123456, 0.1, 1e-07, 5.0, 1796145674.7646031)
    assert pack(("ZADD", *times)) == pack(("ZADD", *map(repr, times)))


def test_garbage_is_a_protocol_error_not_a_hang() -> None:
    for garbage in (b"?what\r\n", b"$abc\r\n", b":12a\r\n", b"*-5\r\n"):
        with pytest.raises(ProtocolError):
            parse(garbage)
    # A reply that holds back more than the limit is a broken stream: a line without its end, or a
    # string announced far larger than Redis allows, fails once that much has come.
    with pytest.raises(ProtocolError, match="without finishing a reply"):
        Parser(limit=65_536).feed(b"+" + b"a" * 70_000)
    parser = Parser(limit=65_536)
    assert parser.feed(b"$999999999999\r\n" + b"x" * 60_000) == []
    with pytest.raises(ProtocolError):
        parser.feed(b"x" * 10_000)
    assert issubclass(ProtocolError, StoreUnavailable)


Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class ScriptedRedis:
    """A loopback TCP server that plays a script per connection and counts connections and their ends."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.opened = 0
        self.closed_by_client = 0
        self.server: asyncio.AbstractServer | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.opened += 1
        try:
            await self.script(reader, writer)
            if not await reader.read(1):
                self.closed_by_client += 1
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed_by_client += 1
        finally:
            writer.transport.abort()

    @property
    def url(self) -> str:
        return f"redis://:secret@127.0.0.1:{self.server.sockets[0].getsockname()[1]}/3"  # type: ignore[union-attr]

    async def __aenter__(self) -> ScriptedRedis:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()


async def read_command(reader: asyncio.StreamReader) -> list[bytes]:
    count = int((await reader.readline())[1:])
    args = []
    for _ in range(count):
        size = int((await reader.readline())[1:])
        args.append((await reader.readexactly(size + 2))[:-2])
    return args


async def eventually(check: Callable[[], bool]) -> None:
    for _ in range(200):
        if check():
            return
        await asyncio.sleep(0.01)
    assert check()


@pytest.mark.parametrize("refusal", [b"-WRONGPASS invalid username-password pair\r\n", b"+OK\r\n"])
async def test_a_refused_auth_or_select_closes_the_socket_and_says_unavailable(refusal: bytes) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert (await read_command(reader)) == [b"AUTH", b"secret"]
        writer.write(refusal)
        if refusal.startswith(b"+"):
            assert (await read_command(reader)) == [b"SELECT", b"3"]
            writer.write(b"-ERR DB index is out of range\r\n")

    async with ScriptedRedis(script) as fake:
        client = RespClient(fake.url, timeout=2)
        for _ in range(2):  # every attempt opens and closes its own socket: nothing leaks
            with pytest.raises(StoreUnavailable) as failed:
                await client.call("PING")
            assert "refused" in str(failed.value) and "secret" not in str(failed.value)
        await eventually(lambda: fake.closed_by_client == 2)
        assert fake.opened == 2
        await client.close()


async def test_a_server_that_never_finishes_set_up_times_out_as_unavailable() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_command(reader)
        await reader.read()  # never answers; returns when the client hangs up

    async with ScriptedRedis(script) as fake:
        client = RespClient(fake.url, timeout=5, connect_timeout=0.3)
        with pytest.raises(StoreUnavailable, match="unreachable"):
            await client.call("PING")
        await eventually(lambda: fake.closed_by_client == 1)
        await client.close()


async def test_a_server_closing_mid_reply_fails_the_waiters_and_the_next_call_reconnects() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_command(reader)  # AUTH
        writer.write(b"+OK\r\n")
        await read_command(reader)  # SELECT
        writer.write(b"+OK\r\n")
        first = await read_command(reader)
        if first == [b"GET", b"a"]:
            await read_command(reader)
            writer.write(b"$10\r\nhalf")  # then hang up in the middle of the bulk string
            await writer.drain()
            raise ConnectionResetError
        writer.write(b"$2\r\nok\r\n")
        await asyncio.sleep(0.2)

    async with ScriptedRedis(script) as fake:
        client = RespClient(fake.url, timeout=2)
        results = await asyncio.gather(client.call("GET", "a"), client.call("GET", "b"), return_exceptions=True)
        assert all(isinstance(r, StoreUnavailable) for r in results)
        assert await client.call("GET", "c") == b"ok"
        assert fake.opened == 2
        await client.close()


async def test_an_overdue_reply_fails_the_call_within_the_timeout() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(2):
            await read_command(reader)
            writer.write(b"+OK\r\n")
        await read_command(reader)
        await reader.read()  # never answers; returns when the client hangs up

    async with ScriptedRedis(script) as fake:
        client = RespClient(fake.url, timeout=0.4)
        with pytest.raises(StoreUnavailable, match="no reply"):
            await asyncio.wait_for(client.call("PING"), 3)
        await client.close()


async def test_a_reply_nobody_asked_for_drops_the_connection() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(2):
            await read_command(reader)
            writer.write(b"+OK\r\n")
        await read_command(reader)
        writer.write(b"+PONG\r\n+EXTRA\r\n")
        await asyncio.sleep(0.5)

    async with ScriptedRedis(script) as fake:
        client = RespClient(fake.url, timeout=2)
        assert await client.call("PING") == b"PONG"
        await eventually(lambda: fake.closed_by_client == 1)
        await client.close()


@pytest.fixture
async def real() -> AsyncIterator[RespClient]:
    client = RespClient(REDIS_URL, timeout=5)
    yield client
    await client.close()


async def test_pipelined_calls_get_their_own_replies_in_order(real: RespClient, redis_prefix: str) -> None:
    key = redis_prefix + ":n"
    calls = []
    for i in range(2_000):
        calls.append(real.call("ECHO", f"v{i}"))
        if i % 100 == 0:
            calls.append(real.call("INCR", key))
        if i % 333 == 0:
            calls.append(real.call("NOSUCHCOMMAND"))
    results = await asyncio.gather(*calls, return_exceptions=True)
    echoes = [r for r in results if isinstance(r, bytes)]
    assert echoes == [f"v{i}".encode() for i in range(2_000)]
    assert [r for r in results if isinstance(r, int)] == list(range(1, 21))
    assert sum(isinstance(r, RedisError) for r in results) == 7


async def test_a_cancelled_caller_does_not_shift_the_replies(real: RespClient) -> None:
    waiting = asyncio.ensure_future(real.call("ECHO", "gone"))
    await asyncio.sleep(0)
    waiting.cancel()
    assert await real.call("ECHO", "mine") == b"mine"


async def test_a_huge_reply_arrives_intact(real: RespClient, redis_prefix: str) -> None:
    key = redis_prefix + ":big"
    blob = bytes(range(256)) * 40_000  # 10 MB with every byte value, CR and LF included
    assert await real.call("SET", key, blob) == b"OK"
    many = [f"{i:08d}" * 20 for i in range(20_000)]
    await real.call("RPUSH", key + "l", *many)
    got, items = await asyncio.gather(real.call("GET", key), real.call("LRANGE", key + "l", 0, -1))
    assert got == blob
    assert items == [m.encode() for m in many]


async def test_wrong_credentials_on_a_real_server_are_unavailable_not_a_crash() -> None:
    host = REDIS_URL.split("//", 1)[1].split("/", 1)[0]
    for url in (f"redis://nobody:wrong@{host}/0", f"redis://{host}/99999"):
        client = RespClient(url, timeout=2)
        with pytest.raises(StoreUnavailable):
            await client.call("PING")
        await client.close()
