"""MAX deliveries to `botflow serve` over raw sockets: kept-alive and pipelined connections, refusals, unusual
targets and chunked bodies answered as the route does, and requests HTTP cannot read answered in JSON."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.channels.max.fake import FakeMax
from tests.integration.runtime_app import msg
from tests.processes import free_port, stop, wait_answering

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "serve-test-admin-token"
TOKEN = "serve-bot-token"
SECRET = "serve_secret"


class Served:
    def __init__(self, port: int, fake: FakeMax) -> None:
        self.port, self.fake = port, fake

    def texts(self, user: int) -> list[str]:
        return [m["text"] for m in self.fake.sent_messages(chat_id=user + 1_000_000)]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve")
    with FakeMax(tokens={TOKEN}) as fake:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
        env.update(PYTHONPATH=str(ROOT), BOTFLOW_MAX_API_URL=fake.url, BOTFLOW_BOOTSTRAP_TOKEN=ADMIN,
                   BOTFLOW_SECRET_KEY="serve-test-key")
        log = tmp / "server.log"
        with log.open("w") as out:
            server = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=tmp,
                                      env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_answering(f"http://127.0.0.1:{port}/healthz", server, 60, log)
            base, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {ADMIN}"}
            flow = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
            for path, body in (("/api/flows", flow), ("/api/flows/registration/versions", {}),
                               ("/api/bots", {"id": "b", "title": "B", "token": TOKEN, "webhook_secret": SECRET}),
                               ("/api/bots/b/publish", {"flow": "registration", "version": 1})):
                assert httpx.post(base + path, json=body, headers=auth, timeout=10).status_code in (200, 201)
            yield Served(port, fake)
        finally:
            stop(server)


def delivery(user: int, text: str, *, secret: str = SECRET, target: str = "/webhooks/max/b",
             version: str = "1.1", extra: str = "") -> bytes:
    body = json.dumps(msg(user, text)).encode()
    return (f"POST {target} HTTP/{version}\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"X-Max-Bot-Api-Secret: {secret}\r\nContent-Length: {len(body)}\r\n{extra}\r\n").encode() + body


def read_answers(sock: socket.socket, n: int) -> list[tuple[bytes, dict[str, str], Any]]:
    """n whole answers (status line, headers, JSON or text body) from the socket, in order."""
    buf, out = b"", []
    sock.settimeout(10)
    while len(out) < n:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            assert chunk, f"the connection closed after {len(out)} answers"
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        headers = {k.decode().lower(): v.decode().strip() for k, v in (line.split(b":", 1) for line in lines[1:])}
        length = int(headers["content-length"])
        while len(buf) < length:
            buf += sock.recv(65536)
        body, buf = buf[:length], buf[length:]
        is_json = headers.get("content-type", "").startswith("application/json")
        out.append((lines[0], headers, json.loads(body) if is_json else body))
    return out


def connect(served: Served) -> socket.socket:
    return socket.create_connection(("127.0.0.1", served.port), timeout=10)


def closed(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def wait_texts(served: Served, user: int, n: int) -> list[str]:
    deadline = time.monotonic() + 10
    while len(served.texts(user)) < n and time.monotonic() < deadline:
        time.sleep(0.02)
    return served.texts(user)


def test_a_delivery_is_answered_on_a_kept_alive_connection(served: Served) -> None:
    with connect(served) as sock:
        sock.sendall(delivery(1, "/start"))
        [(status, headers, body)] = read_answers(sock, 1)
        assert (status, headers["content-type"], body) == (b"HTTP/1.1 200 OK", "application/json", {"ok": True})
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + delivery(1, "Иван"))
        (health, _, _), (status, _, body) = read_answers(sock, 2)
        assert health == b"HTTP/1.1 200 OK" and (status, body) == (b"HTTP/1.1 200 OK", {"ok": True})
    assert len(wait_texts(served, 1, 2)) == 2


def test_pipelined_deliveries_are_answered_in_order(served: Served) -> None:
    with connect(served) as sock:
        sock.sendall(delivery(2, "/start") + delivery(2, "Пётр") + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                     + delivery(2, "/start"))
        answers = read_answers(sock, 4)
    assert [a[0] for a in answers] == [b"HTTP/1.1 200 OK"] * 4
    assert [a[2] for a in answers] == [{"ok": True}, {"ok": True}, {"status": "ok"}, {"ok": True}]
    texts = wait_texts(served, 2, 3)
    assert len(texts) == 3 and texts[0] == texts[2], "the user's updates were handled in the order sent"


@pytest.mark.parametrize("version,extra", [("1.0", ""), ("1.1", "Connection: close\r\n")])
def test_a_connection_that_asks_to_close_is_closed_after_its_answer(served: Served, version: str,
                                                                   extra: str) -> None:
    with connect(served) as sock:
        sock.sendall(delivery(3, "/start", version=version, extra=extra))
        [(status, headers, body)] = read_answers(sock, 1)
        assert (status[-6:], body) == (b"200 OK", {"ok": True}) and headers["connection"] == "close"
        assert closed(sock)


@pytest.mark.parametrize("request_bytes,status,code", [
    (delivery(4, "/start", secret="wrong"), 403, "forbidden"),
    (delivery(4, "/start", target="/webhooks/max/nobody"), 404, "not_found"),
    (delivery(4, "/start").replace(b'"update_type"', b'"update-type"'), 200, None),  # no type: ignored
    (delivery(4, "/start", target="/webhooks/max/%62"), 200, None),  # escaped: through ASGI, still bot b
    (delivery(4, "/start", target="/webhooks/max/b?x=1"), 200, None),  # a query string: through ASGI
], ids=["secret", "unknown-bot", "no-update-type", "escaped-path", "query-string"])
def test_refusals_and_unusual_targets_answer_as_the_route_does(served: Served, request_bytes: bytes, status: int,
                                                               code: str | None) -> None:
    with connect(served) as sock:
        sock.sendall(request_bytes + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        (line, _, body), (health, _, _) = read_answers(sock, 2)
    assert int(line.split()[1]) == status and health == b"HTTP/1.1 200 OK"
    assert (body["error"] if code else body) == (code or {"ok": True})


@pytest.mark.parametrize("request_bytes", [
    b"GET /api/flows HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok\x0b\r\n\r\n",
    b"GET /api/" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    delivery(4, "/start", extra="If-Match: \"\x01\"\r\n"),
], ids=["control-character", "long-target", "delivery-with-a-control-character"])
def test_a_request_http_cannot_read_gets_the_json_error_shape(served: Served, request_bytes: bytes) -> None:
    with connect(served) as sock:
        sock.sendall(request_bytes)
        ((line, headers, body),) = read_answers(sock, 1)
        assert line == b"HTTP/1.1 400 Bad Request" and headers["connection"] == "close"
        assert body["error"] == "bad_request" and "cannot be read as HTTP" in body["message"]
        assert closed(sock)


def test_a_chunked_delivery_is_served_through_asgi(served: Served) -> None:
    body = json.dumps(msg(5, "/start")).encode()
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    with connect(served) as sock:
        sock.sendall(b"POST /webhooks/max/b HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"X-Max-Bot-Api-Secret: " + SECRET.encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked)
        [(status, _, answer)] = read_answers(sock, 1)
    assert (status, answer) == (b"HTTP/1.1 200 OK", {"ok": True})
    assert len(wait_texts(served, 5, 1)) == 1


def test_a_sender_that_hangs_up_still_gets_its_turn_handled(served: Served) -> None:
    with connect(served) as sock:
        sock.sendall(delivery(6, "/start"))
    assert len(wait_texts(served, 6, 1)) == 1
    with connect(served) as sock:  # the server goes on serving new connections
        sock.sendall(delivery(6, "Анна"))
        [(status, _, _)] = read_answers(sock, 1)
    assert status == b"HTTP/1.1 200 OK" and len(wait_texts(served, 6, 2)) == 2


def test_every_max_update_shape_is_answered_200(served: Served) -> None:
    fixtures = sorted((ROOT / "tests" / "data" / "max").glob("*.json"))
    requests = b""
    for path in fixtures:
        body = path.read_bytes()
        requests += (f"POST /webhooks/max/b HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     f"X-Max-Bot-Api-Secret: {SECRET}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    with connect(served) as sock:
        sock.sendall(requests)
        answers = read_answers(sock, len(fixtures))
    assert [(status, body) for status, _, body in answers] == [(b"HTTP/1.1 200 OK", {"ok": True})] * len(fixtures)
    sent = served.fake.requests("POST", "/messages")
    assert not any(call["query"].get("chat_id", "").startswith("-") for call in sent), "nothing goes into a group"
