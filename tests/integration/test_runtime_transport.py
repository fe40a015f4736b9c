"""The runtime's keep-alive HTTP client: MaxClient over it against the fake MAX, and HTTP/1.1 framing."""
from __future__ import annotations

import asyncio

import pytest

from flows.dialog import Reply
from server.channels.max.client import MaxApiError, MaxClient
from server.channels.max.render import message_body, text_body
from server.channels.transport import LeanClient, make_client
from tests.fakemax import FAKE_TOKEN, FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)


async def test_max_calls_go_through_and_errors_keep_their_meaning(fake_max: FakeMax) -> None:  # noqa: F811
    lean = LeanClient(timeout=5)
    client = MaxClient(fake_max.url, rate=1000, client=lean)  # type: ignore[arg-type]
    try:
        reply = Reply("Согласны?", [[{"text": "Да", "payload": "yes"}]])
        answer = await client.send_message(FAKE_TOKEN, chat_id=77, body=message_body(reply))
        assert answer["message"]["recipient"]["chat_id"] == 77
        assert await client.answer_callback(FAKE_TOKEN, "cb-9") == {"success": True}
        assert fake_max.sent_messages(chat_id=77)[0]["attachments"][0]["payload"]["buttons"][0][0]["payload"] == "yes"
        with pytest.raises(MaxApiError) as refused:
            await client.send_message("wrong-token", chat_id=77, body=text_body("x"))
        assert refused.value.status == 401 and not refused.value.retryable
        fake_max.fail_next(1, 503)
        with pytest.raises(MaxApiError) as busy:
            await client.send_message(FAKE_TOKEN, chat_id=77, body=text_body("x"))
        assert busy.value.retryable
        sent = await asyncio.gather(*(client.send_message(FAKE_TOKEN, chat_id=78, body=text_body(str(n)))
                                      for n in range(40)))
        assert len(sent) == 40 and len(fake_max.sent_messages(chat_id=78)) == 40
    finally:
        await lean.aclose()
    down = MaxClient("http://127.0.0.1:1", rate=1000, client=LeanClient(timeout=2))  # type: ignore[arg-type]
    with pytest.raises(MaxApiError) as unreachable:
        await down.send_message(FAKE_TOKEN, chat_id=1, body=text_body("x"))
    assert unreachable.value.retryable


async def test_chunked_bodies_closing_servers_and_stale_connections() -> None:
    answers = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
        b"5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n",
        b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbye",
    ]
    served: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while answers:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]) if b"Content-Length: " in head else 0
            served.append(head + await reader.readexactly(length))
            writer.write(answers.pop(0))
            await writer.drain()
            if len(answers) in (1, 0):  # drop the keep-alive connection after the 2nd answer, and at the end
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = make_client(timeout=5)
    try:
        first = await client.post(f"http://127.0.0.1:{port}/x?y=1", json={"k": "в"})
        assert (first.status_code, first.json()) == (200, {"a": 1})
        second = await client.get(f"http://127.0.0.1:{port}/two")
        assert (second.status_code, second.text) == (201, "ok")
        third = await client.get(f"http://127.0.0.1:{port}/three")  # the pooled connection was closed: reconnects
        assert (third.status_code, third.text) == (200, "bye")
    finally:
        await client.aclose()
        server.close()
    assert served[0].startswith(b"POST /x?y=1 HTTP/1.1\r\n")
    assert served[0].endswith('{"k":"в"}'.encode())
    assert b"accept-encoding: identity" in served[0].lower()  # bodies come back as sent, never compressed
