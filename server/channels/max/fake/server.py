"""A fake MAX Bot API on a real loopback HTTP server, for tests and local runs.

    python -m server.channels.max.fake --port 9000 --token TOKEN
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import socket
import sys
import threading
from typing import Any, Callable

from server.channels.max.fake.app import FakeMaxApp, Json, bot_key
from server.channels.max.fake.http import Server
from server.channels.max.fake.protocol import prepare
from server.channels.max.fake.shapes import SHAPES

__all__ = ["FakeMax", "main"]


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop where it is installed (the fake should cost little CPU beside what it serves)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


class FakeMax(FakeMaxApp):
    """The fake API served in a background thread: `with FakeMax(tokens={"tok"}) as fake: ...`."""

    def __init__(self, tokens: set[str] | frozenset[str] | None = None, *, host: str = "127.0.0.1",
                 port: int = 0, max_calls: int = 20_000) -> None:
        super().__init__(tokens, max_calls=max_calls)
        self.host = host
        self.port = port
        self._thread: threading.Thread | None = None
        self._stop: Callable[[], object] | None = None

    @property
    def url(self) -> str:
        """Base URL to give the client (BOTFLOW_MAX_API_URL)."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> FakeMax:
        """Start serving; returns once the server accepts connections."""
        if self._thread is not None:
            return self
        sock = _bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._closing = False
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(sock, ready), name=f"fake-max-{self.port}",
                                        daemon=True)
        self._thread.start()
        ready.wait(10)
        if self._stop is None:
            raise RuntimeError("the fake MAX server did not start")
        return self

    def _run(self, sock: socket.socket, ready: threading.Event) -> None:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(self.serve(sock, ready.set))

    async def serve(self, sock: socket.socket, started: Callable[[], None] = lambda: None) -> None:
        """Serve on `sock` until `stop` (from any thread); long polls in flight are answered first."""
        loop = asyncio.get_running_loop()
        stopping = asyncio.Event()
        prepare()  # a receiver that pauses on its first call stamps the calls queued meanwhile as one burst
        server = Server(self.handle)
        await server.start(sock)
        self._stop = lambda: loop.call_soon_threadsafe(stopping.set)
        started()
        try:
            await stopping.wait()
        finally:
            await server.close(grace=1.0)

    def stop(self) -> None:
        """Stop serving and wait for the thread (long polls in flight are answered at once)."""
        if self._thread is None or self._stop is None:
            return
        self._release_polls()
        self._stop()
        self._thread.join(10)
        self._thread = self._stop = None

    def __enter__(self) -> FakeMax:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- reading what the bot did -------------------------------------------------------------------
    def requests(self, method: str, path: str, token: str | None = None) -> list[Json]:
        """The calls to one route that the fake answered with 200, optionally for one bot."""
        bot = None if token is None else bot_key(token)
        return [c for c in self.calls if c["method"] == method and c["path"] == path
                and c["status"] == 200 and (bot is None or c["bot"] == bot)]

    def sent_messages(self, chat_id: int | None = None, user_id: int | None = None,
                      token: str | None = None) -> list[Json]:
        """Bodies of the messages accepted by POST /messages, oldest first, filtered by recipient."""
        out = []
        for call in self.requests("POST", "/messages", token):
            query = call["query"]
            if chat_id is not None and query.get("chat_id") != str(chat_id):
                continue
            if user_id is not None and query.get("user_id") != str(user_id):
                continue
            out.append(call["json"])
        return out

    def hung_up(self, method: str = "POST", path: str = "/messages") -> list[Json]:
        """Calls that took effect although the caller hung up before the answer was written."""
        return [c for c in self.calls if c["method"] == method and c["path"] == path and c["status"] == 200
                and (c["hung_up"] or c["dropped"] == "after")]

    def answers(self, token: str | None = None) -> list[Json]:
        """Accepted button answers: {"callback_id", "message", "notification"}, oldest first."""
        return [{"callback_id": c["query"].get("callback_id"), "message": c["json"].get("message"),
                 "notification": c["json"].get("notification")}
                for c in self.requests("POST", "/answers", token)]

    async def wait_for(self, predicate: Any, timeout: float = 5.0, interval: float = 0.01) -> Any:
        """Poll `predicate(self)` without blocking the event loop until it is truthy; its value, or TimeoutError."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (value := predicate(self)):
            if loop.time() >= deadline:
                raise TimeoutError(f"fake MAX: condition not met within {timeout} s")
            await asyncio.sleep(interval)
        return value

    # ---- control routes, for when it runs on its own ------------------------------------------------
    def emit(self, shape: str, user: int, token: str | None = None, **fields: Any) -> Json:
        """Queue one update of a shape real MAX sends (`shapes.SHAPES`) for the user; return it."""
        update = SHAPES[shape](user, **fields)
        self.push_update(update, token)
        return update

    async def _admin(self, method: str, path: str, query: dict[str, str], raw: bytes) -> tuple[int, Json]:
        """GET /_fake/{calls,counts,messages}, POST /_fake/{fail,delay,drop,slow,down,rate,updates,emit,reset}."""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return 400, {"code": "proto.payload", "message": "Body is not valid JSON"}
        if not isinstance(body, dict):
            return 400, {"code": "proto.payload", "message": "Body must be a JSON object"}
        try:
            if (method, path) == ("GET", "/_fake/calls"):
                return 200, {"calls": self.calls}
            if (method, path) == ("GET", "/_fake/counts"):
                return 200, {"counts": self.counts}
            if (method, path) == ("GET", "/_fake/messages"):
                chat_id, user_id = query.get("chat_id"), query.get("user_id")
                return 200, {"messages": self.sent_messages(
                    int(chat_id) if chat_id else None, int(user_id) if user_id else None)}
            if (method, path) == ("POST", "/_fake/fail"):
                retry_after = body.get("retry_after")
                self.fail_next(int(body.get("n", 1)), int(body.get("status", 503)), body.get("path"),
                               None if retry_after is None else float(retry_after))
            elif (method, path) == ("POST", "/_fake/delay"):
                self.delay_next(int(body.get("n", 1)), float(body["seconds"]), body.get("path"))
            elif (method, path) == ("POST", "/_fake/drop"):
                self.drop_next(int(body.get("n", 1)), body.get("path"), str(body.get("when", "before")))
            elif (method, path) == ("POST", "/_fake/slow"):
                self.set_slow(float(body["seconds"]), body.get("path"))
            elif (method, path) == ("POST", "/_fake/down"):
                seconds = body.get("seconds")
                self.set_down(bool(body.get("down", True)), None if seconds is None else float(seconds),
                              drop=bool(body.get("drop", False)))
            elif (method, path) == ("POST", "/_fake/rate"):
                per_second = body.get("per_second")
                self.set_rate_limit(None if per_second is None else float(per_second),
                                    float(body.get("retry_after", 1.0)))
            elif (method, path) == ("POST", "/_fake/updates"):
                updates = body["updates"] if "updates" in body else [body["update"]]
                markers = [self.push_update(update, body.get("token")) for update in updates]
                return 200, {"ok": True, "markers": markers}
            elif (method, path) == ("POST", "/_fake/emit"):
                if body.get("shape") not in SHAPES:
                    return 400, {"code": "proto.payload", "message": f"shape must be one of {', '.join(SHAPES)}"}
                update = self.emit(body["shape"], int(body.get("user", 1)), body.get("token"))
                return 200, {"ok": True, "update": update}
            elif (method, path) == ("POST", "/_fake/reset"):
                self.clear()
            else:
                return 404, {"code": "not.found", "message": f"No control route {method} {path}"}
        except (KeyError, TypeError, ValueError) as exc:
            return 400, {"code": "proto.payload", "message": f"Bad control request: {exc}"}
        return 200, {"ok": True}


def quiet_collector(fake: FakeMaxApp) -> None:
    """No automatic full collections in a fake that is a process of its own; a reset runs one instead.

    The fake keeps the newest calls (20,000 by default) as Python objects. A full collection walks them
    all and holds every answer meanwhile: 20-46 ms in a webhook benchmark, a pause no MAX server has that
    showed up as the p99 of whoever was calling. The records hold no cycles, and young collections still
    run, so between resets only long-lived cyclic garbage waits.
    """
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 1_000_000_000)
    fake.collect_on_clear = True


def main(argv: list[str] | None = None) -> int:
    """Serve the fake API in the foreground until Ctrl+C."""
    parser = argparse.ArgumentParser(prog="python -m server.channels.max.fake",
                                     description="A fake MAX Bot API for local runs and tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000, help="0 picks a free port")
    parser.add_argument("--token", action="append", default=[],
                        help="accepted bot token (repeatable); none given accepts any token")
    parser.add_argument("--max-calls", type=int, default=20_000,
                        help="how many recent calls to keep for /_fake/calls (counts cover all)")
    args = parser.parse_args(argv)
    fake = FakeMax(set(args.token), host=args.host, port=args.port, max_calls=args.max_calls)
    quiet_collector(fake)
    sock = _bind(args.host, args.port)
    fake.port = sock.getsockname()[1]
    print(f"Fake MAX API on {fake.url} (tokens: {len(args.token) or 'any'}); "
          f"set BOTFLOW_MAX_API_URL={fake.url}", flush=True)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(fake.serve(sock))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
