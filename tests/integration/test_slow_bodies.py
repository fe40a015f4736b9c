"""A body sent slowly is given up on with a 408, and never holds a database connection while it arrives."""
from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, Callable

import httpx
import uvicorn
from litestar import Litestar

import server.bodies
from tests.integration.api_helpers import flow_doc
from tests.processes import free_port

SLOW = 20  # more slow requests than the database pool has connections (5 + 10 overflow)


async def served(app: Litestar, port: int) -> tuple[uvicorn.Server, asyncio.Task[Any]]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    return server, task


def start_slow_put(port: int, path: str, token: str) -> socket.socket:
    """Headers and the first bytes of a 1000-byte body; the rest never comes."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall((f"PUT {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                  'Content-Type: application/json\r\nIf-Match: "r1"\r\nContent-Length: 1000\r\n\r\n{"a').encode())
    return sock


def answered(sock: socket.socket) -> bool:
    """Whether an answer has arrived on the socket (without reading it)."""
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except BlockingIOError:
        return False


def answer_of(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    sock.settimeout(30)
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head[9:12]), json.loads(body)


async def test_slow_bodies_get_408_and_hold_no_database_connection(
        make_app: Callable[..., Litestar], bootstrap_token: str, monkeypatch) -> None:
    monkeypatch.setattr(server.bodies, "BODY_SECONDS", 3.0)
    port = free_port()
    uv, task = await served(make_app(), port)
    headers = {"Authorization": f"Bearer {bootstrap_token}"}
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=20) as client:
            made = await client.post("/api/flows", json=flow_doc("slow"), headers=headers)
            assert made.status_code == 201
            socks = [start_slow_put(port, path, bootstrap_token)
                     for path in ["/api/flows/slow"] * (SLOW // 2) + ["/api/flows/slow/tests"] * (SLOW // 2)]
            await asyncio.sleep(0.5)
            # Others are served while the slow bodies trickle in (the pool would be exhausted otherwise).
            listed = await client.get("/api/flows", headers=headers)
            assert listed.status_code == 200 and [f["id"] for f in listed.json()] == ["slow"]
            assert not any(answered(sock) for sock in socks)  # served before any slow body was given up on
            answers = await asyncio.gather(*(asyncio.to_thread(answer_of, sock) for sock in socks))
            for sock in socks:
                sock.close()
            for status, body in answers:
                assert status == 408
                assert body["error"] == "request_timeout" and "did not arrive" in body["message"]
            draft = await client.get("/api/flows/slow", headers=headers)
            assert draft.json()["title"] == flow_doc("slow")["title"]  # nothing half-written
    finally:
        uv.should_exit = True
        await task
