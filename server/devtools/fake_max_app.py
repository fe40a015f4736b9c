"""A fake MAX Bot API as a plain ASGI app: records every call, fails, stalls or cuts connections on demand."""
from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import struct
import threading
import time
from collections import Counter, deque
from typing import Any
from urllib.parse import parse_qsl

from server.devtools.fake_max_faults import DROP_POINTS, Faults, Plan
from server.devtools.fake_max_protocol import (
    Invalid, bot_info, check_answer, check_message, check_subscription, int_param, sent_message,
)

Json = dict[str, Any]
ERROR_CODES = {400: "proto.payload", 401: "verify.token", 404: "not.found", 405: "method.not.allowed",
               429: "too.many.requests", 500: "internal.error", 503: "service.unavailable"}
ROUTES = {"/messages": {"POST"}, "/answers": {"POST"}, "/subscriptions": {"GET", "POST", "DELETE"},
          "/updates": {"GET"}, "/me": {"GET"}}


def bot_key(token: str) -> str:
    """The short, non-secret name under which calls and updates of one token are kept."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def _error(status: int, message: str) -> tuple[int, Json]:
    return status, {"code": ERROR_CODES.get(status, f"http.{status}"), "message": message}


class FakeMaxApp:
    """The ASGI app and its state; public methods are thread-safe so tests can drive it from any thread."""

    def __init__(self, tokens: set[str] | frozenset[str] | None = None, *, max_calls: int = 20_000) -> None:
        # None (or empty) accepts any non-empty token: handy when run by hand against a real database.
        self.tokens = frozenset(tokens or ())
        self._lock = threading.Lock()
        # A record is about 5 KB, so only the newest `max_calls` are kept; `counts` covers every call.
        self._calls: deque[Json] = deque(maxlen=max_calls)
        self._counts: Counter[str] = Counter()
        self._faults = Faults()
        self._subs: dict[str, dict[str, Json]] = {}
        self._queues: dict[str, list[tuple[int, Json]]] = {}
        self._committed: dict[str, int] = {}
        self._next_seq = 1
        self._next_mid = 1
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakers: dict[str, asyncio.Event] = {}
        # Set while shutting down: pending long polls answer at once instead of holding the server open.
        self._closing = False

    def key(self, token: str | None) -> str:
        """The bot key for `token`; without one, the only configured token's key."""
        if token is None:
            if len(self.tokens) != 1:
                raise ValueError("several (or no) tokens are configured: say which bot with token=")
            token = next(iter(self.tokens))
        return bot_key(token)

    @property
    def calls(self) -> list[Json]:
        """Every API call so far, oldest first: method, path, query, headers, json, status, response, time, bot."""
        with self._lock:
            return [dict(call) for call in self._calls]

    @property
    def counts(self) -> dict[str, int]:
        """How many API calls got each answer, e.g. {"POST /messages 200": 1400}; never truncated."""
        with self._lock:
            return dict(self._counts)

    def subscriptions(self, token: str | None = None) -> list[Json]:
        """The bot's webhook subscriptions, secrets included (the API itself never shows them)."""
        with self._lock:
            return [dict(sub) for sub in self._subs.get(self.key(token), {}).values()]

    def push_update(self, update: Json, token: str | None = None) -> int:
        """Queue one update for GET /updates of that bot; return its sequence number (the marker after it)."""
        key = self.key(token)
        update = {"timestamp": int(time.time() * 1000), **update}
        with self._lock:
            seq = self._next_seq
            self._next_seq += 1
            self._queues.setdefault(key, []).append((seq, update))
        self._wake(key)
        return seq

    def fail_next(self, n: int = 1, status: int = 503, path: str | None = None,
                  retry_after: float | None = None) -> None:
        """Answer the next `n` API calls (to `path`, if given) with `status`, a MAX error body and Retry-After."""
        if not 400 <= status <= 599:
            raise ValueError("status must be an HTTP error status (400-599)")
        with self._lock:
            self._faults.add("fail", n, path, status=status, retry_after=retry_after)

    def delay_next(self, n: int, seconds: float, path: str | None = None) -> None:
        """Hold the next `n` API calls (to `path`, if given) for `seconds` before answering."""
        with self._lock:
            self._faults.add("delay", n, path, seconds=seconds)

    def drop_next(self, n: int = 1, path: str | None = None, when: str = "before") -> None:
        """Cut the connection of the next `n` calls (a reset, no answer): "before" or "after" the call took effect."""
        if when not in DROP_POINTS:
            raise ValueError("when must be 'before' or 'after'")
        with self._lock:
            self._faults.add("drop", n, path, when=when)

    def set_slow(self, seconds: float, path: str | None = None) -> None:
        """Hold every call (to `path`, if given) for `seconds` until set back to 0: a slow MAX."""
        with self._lock:
            if seconds > 0:
                self._faults.slow[path] = seconds
            else:
                self._faults.slow.pop(path, None)

    def set_down(self, down: bool = True, seconds: float | None = None, *, drop: bool = False) -> None:
        """While down (for `seconds`, or until set up again), every call gets 503, or its connection cut (`drop`)."""
        with self._lock:
            self._faults.set_down(down, seconds, drop)

    def set_rate_limit(self, per_second: float | None, retry_after: float = 1.0) -> None:
        """Refuse a bot's calls beyond `per_second` in any second with 429 and Retry-After; None lifts it."""
        with self._lock:
            self._faults.rate = per_second
            self._faults.rate_retry_after = retry_after

    def clear(self) -> None:
        """Forget calls, pending failures and delays, queued updates and subscriptions; come back up."""
        with self._lock:
            self._calls.clear()
            self._counts.clear()
            self._faults.clear()
            self._subs.clear()
            self._queues.clear()
            self._committed.clear()

    def _wake(self, key: str | None) -> None:
        """Wake the long polls of bot `key`, or all of them (safe from any thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._set_wakers, key)

    def _set_wakers(self, key: str | None) -> None:
        for name, event in self._wakers.items():
            if key is None or name == key:
                event.set()

    def _release_polls(self) -> None:
        """Answer every pending long poll now; called before stopping so none holds the server open."""
        self._closing = True
        self._wake(None)

    def _authorised(self, token: str) -> bool:
        return bool(token) and (not self.tokens or token in self.tokens)

    async def __call__(self, scope: Json, receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # served with lifespan="off"; nothing else to answer
            return
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # first request, or served again after a restart: events are per loop
            self._loop, self._wakers = loop, {}
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        path = scope["path"]
        query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
        headers = [(b"content-type", b"application/json; charset=utf-8")]
        if path.startswith("/_fake/"):
            status, answer = await self._admin(scope["method"], path, query, raw)
        else:
            # Resolves when the caller hangs up: a held call notices it, and the record says so.
            gone = asyncio.ensure_future(receive())
            try:
                status, answer, plan, record = await self._api(scope, path, query, raw, gone)
                if plan.drop is not None:
                    await _cut(send)
                    return
                if status == 429 or plan.retry_after is not None:
                    headers.append((b"retry-after", b"%g" % (plan.retry_after or 1)))
                await asyncio.sleep(0)  # let a hang-up that already arrived be seen
                record["hung_up"] = gone.done()
            finally:
                gone.cancel()
        body = json.dumps(answer, ensure_ascii=False).encode()
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _admin(self, method: str, path: str, query: dict[str, str], raw: bytes) -> tuple[int, Json]:
        """Control routes under /_fake/ (added by FakeMax); the bare app has none."""
        return _error(404, f"Path {path} is not recognized")

    async def _api(self, scope: Json, path: str, query: dict[str, str], raw: bytes,
                   gone: asyncio.Future[Any]) -> tuple[int, Json, Plan, Json]:
        """Record the call, apply injected trouble, check the token, route it."""
        method = scope["method"]
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        token = headers.get("authorization", "")
        if "authorization" in headers:
            headers["authorization"] = "<redacted>"
        try:
            payload = json.loads(raw) if raw else None
            bad_json = False
        except ValueError:
            payload, bad_json = None, True
        record = {"method": method, "path": path, "query": query, "headers": headers, "json": payload,
                  "status": None, "response": None, "time": time.time(), "answered": None,
                  "bot": bot_key(token) if token else None, "hung_up": False, "dropped": None}
        with self._lock:
            self._calls.append(record)
            plan = self._faults.plan(path, record["bot"], self._authorised(token))
        if plan.hold > 0:
            await asyncio.wait([gone], timeout=plan.hold)
        if plan.drop == "before":
            status, answer = 0, {}
        elif plan.status == 503:
            status, answer = _error(503, "Service is temporarily unavailable")
        elif plan.status == 401:
            status, answer = _error(401, "Invalid access_token")
        elif plan.status == 429:
            status, answer = _error(429, "Too many requests")
        elif plan.status is not None:
            status, answer = _error(plan.status, "Injected failure")
        elif path not in ROUTES:
            status, answer = _error(404, f"Path {path} is not recognized")
        elif method not in ROUTES[path]:
            status, answer = _error(405, f"Method {method} is not allowed for {path}")
        elif bad_json:
            status, answer = _error(400, "Request body is not valid JSON")
        else:
            try:
                status, answer = 200, await self._route(method, path, query, payload, record["bot"])
            except Invalid as exc:
                status, answer = _error(400, str(exc))
        record["status"], record["response"], record["answered"] = status, answer, time.time()
        record["dropped"] = plan.drop
        with self._lock:
            self._counts[f"{method} {path} {'dropped' if plan.drop == 'before' else status}"] += 1
        return status, answer, plan, record

    async def _route(self, method: str, path: str, query: dict[str, str], payload: Any, key: str) -> Json:
        if path == "/messages":
            return self._send(query, payload, key)
        if path == "/answers":
            if not query.get("callback_id", "").strip():
                raise Invalid("Parameter `callback_id` is required")
            check_answer(payload)
            return {"success": True}
        if path == "/subscriptions":
            return self._subscriptions(method, query, payload, key)
        if path == "/updates":
            return await self._updates(query, key)
        return bot_info(key)

    def _send(self, query: dict[str, str], payload: Any, key: str) -> Json:
        chat_id = int_param(query, "chat_id")
        user_id = int_param(query, "user_id")
        if chat_id is None and user_id is None:
            raise Invalid("Parameter `user_id` or `chat_id` is required")
        check_message(payload)
        with self._lock:
            number = self._next_mid
            self._next_mid += 1
        return {"message": sent_message(bot_info(key), number, chat_id, user_id, payload)}

    def _subscriptions(self, method: str, query: dict[str, str], payload: Any, key: str) -> Json:
        if method == "GET":
            with self._lock:
                subs = list(self._subs.get(key, {}).values())
            return {"subscriptions": [{"url": s["url"], "time": s["time"], "update_types": s["update_types"]}
                                      for s in subs]}
        if method == "POST":
            body = check_subscription(payload)
            sub = {"url": body["url"], "time": int(time.time() * 1000), "secret": body.get("secret"),
                   "update_types": body.get("update_types")}
            with self._lock:
                self._subs.setdefault(key, {})[sub["url"]] = sub
            return {"success": True}
        url = query.get("url")
        if not url:
            raise Invalid("Parameter `url` is required")
        with self._lock:
            self._subs.get(key, {}).pop(url, None)
        return {"success": True}

    def _batch(self, key: str, marker: int | None, limit: int, types: set[str] | None) -> tuple[list, int]:
        """Commit up to `marker`, then the next updates (filtered) and the marker after them (lock held)."""
        committed = self._committed.get(key, 1)
        if marker is not None and marker > committed:
            committed = self._committed[key] = marker
        queue = self._queues.get(key, [])
        while queue and queue[0][0] < committed:
            queue.pop(0)
        out: list[Json] = []
        after = committed
        for seq, update in queue:
            if len(out) >= limit:
                break
            after = seq + 1
            if types is None or update.get("update_type") in types:
                out.append(update)
        return out, after

    async def _updates(self, query: dict[str, str], key: str) -> Json:
        marker = int_param(query, "marker")
        timeout = int_param(query, "timeout", low=0, high=90)
        limit = int_param(query, "limit", low=1, high=1000)
        types = {t for t in query.get("types", "").split(",") if t} or None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (30 if timeout is None else timeout)
        waker = self._wakers.setdefault(key, asyncio.Event())
        while True:
            waker.clear()
            with self._lock:
                updates, after = self._batch(key, marker, 100 if limit is None else limit, types)
            remaining = deadline - loop.time()
            if updates or remaining <= 0 or self._closing:
                return {"updates": updates, "marker": after}
            try:
                await asyncio.wait_for(waker.wait(), remaining)
            except TimeoutError:
                pass


async def _cut(send: Any) -> None:
    """Reset the caller's connection without an answer (uvicorn's `send` is bound to the connection's cycle)."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None:
        raise RuntimeError("this server does not let the fake cut a connection")
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST, not FIN
        except OSError:
            pass
    transport.abort()
    for _ in range(3):
        await asyncio.sleep(0)  # let the server see the connection gone before the app returns
