"""A fake MAX Bot API: records every call, fails, stalls or cuts connections on demand (served by fake_max_http)."""
from __future__ import annotations

import asyncio
import gc
import hashlib
import threading
import time
from collections import Counter, deque
from functools import lru_cache
from typing import Any, Coroutine
from urllib.parse import parse_qsl

import msgspec

from server.channels.max.fake.faults import DROP_POINTS, Faults, Plan
from server.channels.max.fake.http import Answer, Request
from server.channels.max.fake.protocol import (
    Invalid, bot_info, check_answer, check_message, check_subscription, int_param, sender, sent_message,
)
from server.channels.max.fake.uploads import UPLOAD_PATH, FakeUploads, NotReady

Json = dict[str, Any]
ERROR_CODES = {400: "proto.payload", 401: "verify.token", 404: "not.found", 405: "method.not.allowed",
               429: "too.many.requests", 500: "internal.error", 503: "service.unavailable"}
ROUTES = {"/messages": {"POST"}, "/answers": {"POST"}, "/subscriptions": {"GET", "POST", "DELETE"},
          "/updates": {"GET"}, "/me": {"GET"}, "/uploads": {"POST"}}


_sender = lru_cache(maxsize=256)(sender)  # a bot's sender fields do not change


@lru_cache(maxsize=256)
def bot_key(token: str) -> str:
    """The short, non-secret name under which calls and updates of one token are kept."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def _error(status: int, message: str) -> tuple[int, Json]:
    return status, {"code": ERROR_CODES.get(status, f"http.{status}"), "message": message}


def _public(call: Json) -> Json:
    """A copy of a call's record as readers see it: headers as a dict of text, the token redacted."""
    copy = dict(call)
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in call["headers"]}
    if "authorization" in headers:
        headers["authorization"] = "<redacted>"
    copy["headers"] = headers
    return copy


class FakeMaxApp:
    """The fake's state and answers; public methods are thread-safe so tests can drive it from any thread."""

    collect_on_clear = False  # a process of its own runs its full collections here (see fake_max.quiet_collector)

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
        self.uploads = FakeUploads()  # set `uploads.not_ready_for` to change how long a new token is not ready

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
            return [_public(call) for call in self._calls]

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
        self.uploads.clear()
        if self.collect_on_clear:
            gc.collect()

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

    def handle(self, request: Request) -> Answer | Coroutine[Any, Any, Answer]:
        """Answer one request: at once when nothing must wait, else a coroutine (holds, long polls, control)."""
        query = _query(request.query) if request.query else {}
        if request.path.startswith("/_fake/"):
            return self._control(request, query)
        if request.path.startswith(UPLOAD_PATH):
            return self._upload(request)
        record, plan, payload, bad_json = self._arrive(request, query)
        if plan.hold > 0 or (request.path == "/updates" and plan.status is None and plan.drop != "before"):
            return self._later(request, query, record, plan, payload, bad_json)
        status, answer = self._decide(request.method, request.path, query, payload, bad_json, record, plan)
        return self._answer(status, answer, record, plan)

    async def _control(self, request: Request, query: dict[str, str]) -> Answer:
        status, answer = await self._admin(request.method, request.path, query, request.body)
        return Answer(status, msgspec.json.encode(answer))

    async def _later(self, request: Request, query: dict[str, str], record: Json, plan: Plan, payload: Any,
                     bad_json: bool) -> Answer:
        """A call that waits: held for `plan.hold` (or until the caller hangs up), or a long poll."""
        if plan.hold > 0:
            await asyncio.wait([request.gone], timeout=plan.hold)
        status, answer = self._decide(request.method, request.path, query, payload, bad_json, record, plan)
        if status == 200 and request.path == "/updates":
            answer = await self._updates(query, record["bot"])
            record["response"], record["answered"] = answer, time.time()
        return self._answer(status, answer, record, plan)

    def _arrive(self, request: Request, query: dict[str, str]) -> tuple[Json, Plan, Any, bool]:
        """Record the call and decide its fate (plan) as it arrives."""
        token = ""
        for name, value in request.headers:
            if name == b"authorization":
                token = value.decode("latin-1")
                break
        raw = request.body
        try:
            payload = msgspec.json.decode(raw) if raw else None
            bad_json = False
        except msgspec.DecodeError:
            payload, bad_json = None, True
        # Headers are kept as they came and turned into a dict (token redacted) only when read.
        record: Json = {"method": request.method, "path": request.path, "query": query, "headers": request.headers,
                  "json": payload, "status": None, "response": None, "time": time.time(), "answered": None,
                  "bot": bot_key(token) if token else None, "hung_up": False, "dropped": None}
        with self._lock:
            self._calls.append(record)
            plan = self._faults.plan(request.path, record["bot"], self._authorised(token))
        return record, plan, payload, bad_json

    def _decide(self, method: str, path: str, query: dict[str, str], payload: Any, bad_json: bool, record: Json,
                plan: Plan) -> tuple[int, Json]:
        """Status and body for a call whose hold is over (a long poll's updates are fetched after this)."""
        answer: Json
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
                if path == "/updates":
                    _poll_params(query)  # checked now; the updates are fetched once the call may wait
                    answer = {}
                elif path == "/uploads":
                    answer = self.uploads.endpoint(query, _header(record["headers"], b"host") or "127.0.0.1")
                else:
                    answer = self._route(method, path, query, payload, record["bot"])
                status = 200
            except Invalid as exc:
                status, answer = _error(400, str(exc))
            except NotReady as exc:
                status, answer = 400, {"code": "attachment.not.ready", "message": str(exc)}
        record["status"], record["response"], record["answered"] = status, answer, time.time()
        record["dropped"] = plan.drop
        with self._lock:
            self._counts[f"{method} {path} {'dropped' if plan.drop == 'before' else status}"] += 1
        return status, answer

    @staticmethod
    def _answer(status: int, answer: Json, record: Json, plan: Plan) -> Answer:
        def written(hung_up: bool) -> None:
            record["hung_up"] = hung_up

        if plan.drop is not None:
            return Answer(status, cut=True, written=written)
        headers = []
        if status == 429 or plan.retry_after is not None:
            headers.append((b"retry-after", b"%g" % (plan.retry_after or 1)))
        return Answer(status, msgspec.json.encode(answer), headers, written=written)

    async def _admin(self, method: str, path: str, query: dict[str, str], raw: bytes) -> tuple[int, Json]:
        """Control routes under /_fake/ (added by FakeMax); the bare app has none."""
        return _error(404, f"Path {path} is not recognized")

    def _route(self, method: str, path: str, query: dict[str, str], payload: Any, key: str) -> Json:
        if path == "/messages":
            return self._send(query, payload, key)
        if path == "/answers":
            if not query.get("callback_id", "").strip():
                raise Invalid("Parameter `callback_id` is required")
            check_answer(payload)
            return {"success": True}
        if path == "/subscriptions":
            return self._subscriptions(method, query, payload, key)
        return bot_info(key)

    def _send(self, query: dict[str, str], payload: Any, key: str) -> Json:
        chat_id = int_param(query, "chat_id")
        user_id = int_param(query, "user_id")
        if chat_id is None and user_id is None:
            raise Invalid("Parameter `user_id` or `chat_id` is required")
        check_message(payload)
        self.uploads.check_tokens(payload)
        with self._lock:
            number = self._next_mid
            self._next_mid += 1
        return {"message": sent_message(_sender(key), number, chat_id, user_id, payload)}

    def _upload(self, request: Request) -> Answer:
        """The bytes of an upload arrive at the URL `POST /uploads` gave (no token: the URL is the key)."""
        status, answer = self.uploads.receive(request.path, _header(request.headers, b"content-type"), request.body)
        record = {"method": request.method, "path": UPLOAD_PATH, "query": {}, "headers": request.headers,
                  "json": None, "status": status, "response": answer, "time": time.time(), "answered": time.time(),
                  "bot": None, "hung_up": False, "dropped": None}
        with self._lock:
            self._calls.append(record)
            self._counts[f"{request.method} {UPLOAD_PATH} {status}"] += 1
        return Answer(status, msgspec.json.encode(answer))

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
        marker, timeout, limit, types = _poll_params(query)
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # the first poll, or served again after a restart: events are per loop
            self._loop, self._wakers = loop, {}
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


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    """One request header's value as text ("" when absent); names arrive in lower case."""
    return next((value.decode("latin-1") for key, value in headers if key == name), "")


def _query(raw: bytes) -> dict[str, str]:
    """The query string's parameters (the last of a repeated name), as parse_qsl reads them."""
    text = raw.decode("latin-1")
    if "%" in text or "+" in text:
        return dict(parse_qsl(text, keep_blank_values=True))
    return dict(pair.partition("=")[::2] for pair in text.split("&") if pair)


def _poll_params(query: dict[str, str]) -> tuple[int | None, int | None, int | None, set[str] | None]:
    """GET /updates's marker, timeout, limit and types; Invalid when one is out of range."""
    return (int_param(query, "marker"), int_param(query, "timeout", low=0, high=90),
            int_param(query, "limit", low=1, high=1000),
            {t for t in query.get("types", "").split(",") if t} or None)
