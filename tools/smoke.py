"""Smoke test of an installed Botflow: `python tools/smoke.py` with the venv's python, from the repository.

Starts `botflow serve` (the `botflow` next to this interpreter) in an empty temporary directory on a free
port, with the fake MAX API, then checks /healthz, the login page and its stylesheet, and one webhook round
trip (a bot serving the published registration flow answers `/start`), and stops it with SIGTERM.
Exits 0 when every check passes; otherwise prints what failed and exits 1.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from server.channels.max.fake import FakeMax

ROOT = Path(__file__).resolve().parent.parent
ADMIN = "smoke-admin-token-0123456789"
BOT_TOKEN = "smoke-bot-token"
SECRET = "smoke_secret"


class SmokeFailed(Exception):
    """One check did not hold; the message says which."""


def say(text: str) -> None:
    print(f"[smoke] {text}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def call(base: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
         ) -> tuple[int, bytes]:
    """Status and body of one HTTP call (error statuses included)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def expect(base: str, method: str, path: str, status: int, body: Any = None, **kw: Any) -> bytes:
    got, content = call(base, method, path, body, **kw)
    if got != status:
        raise SmokeFailed(f"{method} {path} answered {got}, expected {status}: {content[:300]!r}")
    return content


def wait_until_up(base: str, server: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SmokeFailed(f"botflow serve exited with status {server.returncode} before answering")
        try:
            if call(base, "GET", "/healthz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SmokeFailed(f"botflow serve did not answer /healthz within {seconds:.0f} s")


def checks(base: str, fake: FakeMax) -> None:
    health = json.loads(expect(base, "GET", "/healthz", 200))
    if health.get("status") != "ok":
        raise SmokeFailed(f"/healthz said {health}")
    say("healthz ok")
    login = expect(base, "GET", "/login", 200, headers={"Authorization": ""}).decode()
    if "<form" not in login:
        raise SmokeFailed("the login page has no form")
    sheets = re.findall(r'href="(/static/[^"]+\.css)"', login)
    if not sheets:
        raise SmokeFailed("the login page links no stylesheet")
    for sheet in sheets:
        expect(base, "GET", sheet, 200)  # package data: a wheel without static/ fails here
    say(f"login page ok ({len(sheets)} stylesheet(s) served)")

    flow = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    expect(base, "POST", "/api/flows", 201, flow)
    version = json.loads(expect(base, "POST", f"/api/flows/{flow['id']}/versions", 201, {"note": "smoke"}))
    expect(base, "POST", "/api/bots", 201, {"id": "smoke", "title": "Smoke", "token": BOT_TOKEN,
                                            "webhook_secret": SECRET})
    expect(base, "POST", "/api/bots/smoke/publish", 200,
           {"flow": flow["id"], "version": version["version"], "sessions": "keep"})
    update = {"update_type": "message_created", "timestamp": 1785182044286,
              "message": {"sender": {"user_id": 7, "first_name": "Ann", "is_bot": False},
                          "recipient": {"chat_id": 1007, "chat_type": "dialog"}, "timestamp": 1785182044286,
                          "body": {"mid": "mid.smoke-1", "seq": 1, "text": "/start"}}}
    expect(base, "POST", "/webhooks/max/smoke", 200, update, headers={"X-Max-Bot-Api-Secret": SECRET})
    deadline = time.monotonic() + 10
    while not fake.sent_messages(chat_id=1007):
        if time.monotonic() > deadline:
            raise SmokeFailed("the fake MAX received no reply to /start within 10 s")
        time.sleep(0.05)
    say(f"webhook round trip ok: the bot answered {fake.sent_messages(chat_id=1007)[0].get('text')!r}")


def package_data() -> None:
    """The Redis store's Lua scripts ship inside the installed package (they are read when it is imported)."""
    from server.runtime.stores import redis_scripts

    found = sorted(redis_scripts.HERE.glob("*.lua"))
    if ROOT in redis_scripts.HERE.parents:
        raise SmokeFailed(f"the scripts were read from the repository ({redis_scripts.HERE}), not the install")
    if not found:
        raise SmokeFailed(f"no Lua script installed in {redis_scripts.HERE}")
    say(f"{len(found)} Lua scripts installed")


def main() -> int:
    try:
        package_data()
    except SmokeFailed as exc:
        say(f"FAILED: {exc}")
        return 1
    botflow = Path(sys.executable).with_name("botflow")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with FakeMax(tokens={BOT_TOKEN}) as fake, tempfile.TemporaryDirectory(prefix="botflow-smoke-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_") and k != "PYTHONPATH"}
        env.update(BOTFLOW_MAX_API_URL=fake.url, BOTFLOW_BOOTSTRAP_TOKEN=ADMIN,
                   BOTFLOW_SECRET_KEY="smoke-secret-key-0123456789")
        say(f"starting {botflow} serve on port {port} in {tmp}")
        server = subprocess.Popen([str(botflow), "serve", "--port", str(port)], cwd=tmp, env=env)
        try:
            wait_until_up(base, server)
            checks(base, fake)
        except SmokeFailed as exc:
            say(f"FAILED: {exc}")
            return 1
        finally:
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(30)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
        if server.returncode != 0:
            say(f"FAILED: botflow serve exited with status {server.returncode} after SIGTERM")
            return 1
        say("stopped cleanly; all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
