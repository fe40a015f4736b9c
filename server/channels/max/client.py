"""Async client for the MAX Bot API calls the runtime makes (rate-limited per bot)."""
from __future__ import annotations

import asyncio
import hashlib
import math
from functools import lru_cache
from typing import Any

import httpx
import msgspec

from server.channels.base import SendError
from server.channels.ratelimit import RateLimiter
from server.channels.transport import OutcomeUnknown

# httpcore's pool does work in proportion to its connections times its queued requests on every checkout,
# so a bounded number of calls in flight (the rest wait on a semaphore, outside the pool) costs far less
# CPU under load than a large pool, while still overlapping network latency.
DEFAULT_CONCURRENCY = 32
# Extra connections for long polls, which hold a connection for up to their timeout and skip the semaphore.
LONG_POLL_CONNECTIONS = 4
# Long enough for a slow MAX: a send that gives up early and is retried is a message sent twice.
SEND_TIMEOUT = 30.0
JSON_HEADERS = {"Content-Type": "application/json; charset=utf-8", "Accept": "application/json"}


# MAX names every error in its body's `code`; a few say more than the status does.
RETRYABLE_CODES = frozenset({"attachment.not.ready", "too.many.requests", "service.unavailable", "internal.error"})
FINAL_CODES = frozenset({"verify.token", "access.denied", "chat.denied", "proto.payload", "not.found",
                         "method.not.allowed"})


def retryable(status: int, code: str) -> bool:
    """Whether a MAX error answer may succeed later: by its code when known, else 429 and 5xx."""
    if code in RETRYABLE_CODES:
        return True
    if code in FINAL_CODES:
        return False
    return status == 429 or status >= 500


class MaxApiError(SendError):
    """A MAX call failed; `retryable` says whether trying again later may succeed."""

    def __init__(self, status: int | None, code: str, message: str, retryable: bool,
                 *, retry_after: float | None = None, unknown: bool = False) -> None:
        super().__init__(status, code, message, retryable, retry_after=retry_after, unknown=unknown, prefix="MAX API")


# A Retry-After beyond this is taken as this: one broken answer must not silence a bot for days.
MAX_RETRY_AFTER = 3600.0


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (names in lower case: LeanResponse's own, httpx's either case)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date, or garbage: the usual backoff applies
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER)


@lru_cache(maxsize=1024)  # asked on every call; a bot's token rarely changes
def token_key(token: str) -> str:
    """A stable, non-secret key for one bot's token (rate-limit bucket, log lines)."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def _scrub(text: str, token: str) -> str:
    """The text with the token blanked out, should a server ever echo it back."""
    return text.replace(token, "***") if token and token in text else text


class _Status(msgspec.Struct):
    """What a sender needs of an answer: whether MAX said the call failed (the rest, the sent message
    included, is skipped unread)."""

    success: Any = None


_status = msgspec.json.Decoder(_Status).decode


class MaxClient:
    """One shared HTTP/1.1 keep-alive connection pool to MAX; every call waits for its bot's rate slot."""

    def __init__(self, base_url: str, *, rate: float | None = 30.0, timeout: float = SEND_TIMEOUT,
                 client: httpx.AsyncClient | None = None, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        """`rate` None: the caller keeps the rate itself (the runtime's shared per-bot limiter)."""
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.limiter = RateLimiter(rate) if rate is not None else None
        self._slots = asyncio.Semaphore(concurrency)
        self._own_client = client is None
        size = concurrency + LONG_POLL_CONNECTIONS
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size, keepalive_expiry=30.0)
        self._client = client or httpx.AsyncClient(limits=limits, timeout=timeout, http2=False)
        self._headers: dict[str, dict[str, str]] = {}  # token -> the headers of its calls

    async def aclose(self) -> None:
        """Close the connection pool (only if this client created it)."""
        if self._own_client:
            await self._client.aclose()

    async def __aenter__(self) -> MaxClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def request(self, token: str, method: str, path: str, *, params: dict[str, Any] | None = None,
                      body: Any = None, long_poll: float | None = None, answer: bool = True) -> dict[str, Any]:
        """One API call: wait for the bot's rate slot, send, return the JSON answer or raise MaxApiError.

        `long_poll` is how long the server may hold the call; such a call skips the in-flight cap.
        `answer` False: the caller does not read the answer, so a success is only checked, not decoded
        (an empty dict comes back).
        """
        if self.limiter is not None:
            await self.limiter.acquire(token_key(token))
        headers = self._headers.get(token)
        if headers is None:
            if len(self._headers) >= 1024:  # tokens come and go; a bounded cache is enough
                self._headers.clear()
            headers = self._headers[token] = {"Authorization": token, **JSON_HEADERS}
        content = None if body is None else msgspec.json.encode(body)
        query = {k: v for k, v in params.items() if v is not None} if params else {}
        url = self.base_url + path
        try:
            if long_poll is not None:
                response = await self._client.request(method, url, params=query, content=content,
                                                       headers=headers, timeout=long_poll + self.timeout)
            else:
                async with self._slots:
                    response = await self._client.request(method, url, params=query, content=content,
                                                           headers=headers, timeout=self.timeout)
        except (OutcomeUnknown, httpx.ReadTimeout) as exc:
            raise MaxApiError(None, "unknown_outcome", f"{method} {path} got no answer ({type(exc).__name__})",
                              False, unknown=True) from None
        except httpx.TimeoutException as exc:
            raise MaxApiError(None, "timeout", f"{method} {path} timed out ({type(exc).__name__})",
                              True) from None
        except httpx.TransportError as exc:
            detail = _scrub(str(exc), token) or type(exc).__name__
            raise MaxApiError(None, "network", f"{method} {path} failed: {detail}", True) from None
        if not answer and response.status_code < 400:
            return self._checked(response, token, method, path)
        return self._result(response, token, method, path)

    @staticmethod
    def _checked(response: httpx.Response, token: str, method: str, path: str) -> dict[str, Any]:
        """{} for a success, or the MaxApiError `_result` raises, without decoding the rest of the answer."""
        try:
            status = _status(response.content)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return MaxClient._result(response, token, method, path)  # not an object: `_result` says so
        if status.success is False:
            return MaxClient._result(response, token, method, path)  # it raises, with MAX's message
        return {}

    @staticmethod
    def _result(response: httpx.Response, token: str, method: str, path: str) -> dict[str, Any]:
        """The decoded answer, or MaxApiError built from MAX's {"code", "message"} error body."""
        status = response.status_code
        try:
            data = response.json()
        except ValueError:
            data = None
        if status >= 400:
            info = data if isinstance(data, dict) else {}
            code = str(info.get("code") or info.get("error") or f"http.{status}")
            message = _scrub(str(info.get("message") or response.reason_phrase or ""), token)
            retry_after = _retry_after(response.headers.get("retry-after")) if status == 429 else None
            raise MaxApiError(status, code, f"{method} {path}: {message}", retryable(status, code),
                              retry_after=retry_after)
        if not isinstance(data, dict):
            # The call went through but the answer is unreadable; repeating it could send twice.
            raise MaxApiError(status, "bad.response", f"{method} {path}: answer is not a JSON object", False)
        if data.get("success") is False:
            message = _scrub(str(data.get("message") or "the call did not succeed"), token)
            raise MaxApiError(status, "not.success", f"{method} {path}: {message}", False)
        return data

    async def send_message(self, token: str, *, chat_id: int | None = None, user_id: int | None = None,
                           body: dict[str, Any], answer: bool = True) -> dict[str, Any]:
        """POST /messages to a chat (`chat_id`) or a user's dialog (`user_id`); returns {"message": {...}}
        (`answer` False: {} once it succeeded)."""
        if (chat_id is None) == (user_id is None):
            raise ValueError("send_message needs exactly one of chat_id or user_id")
        params = {"chat_id": chat_id} if chat_id is not None else {"user_id": user_id}
        return await self.request(token, "POST", "/messages", params=params, body=body, answer=answer)

    async def answer_callback(self, token: str, callback_id: str, body: dict[str, Any] | None = None, *,
                              answer: bool = True) -> dict[str, Any]:
        """POST /answers: acknowledge a button press with a CallbackAnswer (`render.answer_body`: only the
        fields that are set; none at all just acknowledges)."""
        return await self.request(token, "POST", "/answers", params={"callback_id": callback_id},
                                  body=body if body is not None else {}, answer=answer)

    async def subscribe(self, token: str, url: str, secret: str,
                        update_types: list[str] | None = None) -> dict[str, Any]:
        """POST /subscriptions: have MAX deliver updates to `url` with `secret` in X-Max-Bot-Api-Secret."""
        body: dict[str, Any] = {"url": url, "secret": secret}
        if update_types is not None:
            body["update_types"] = list(update_types)
        return await self.request(token, "POST", "/subscriptions", body=body)

    async def subscriptions(self, token: str) -> list[dict[str, Any]]:
        """GET /subscriptions: the bot's webhook subscriptions ({"url", "time", "update_types"})."""
        data = await self.request(token, "GET", "/subscriptions")
        return list(data.get("subscriptions") or [])

    async def unsubscribe(self, token: str, url: str) -> dict[str, Any]:
        """DELETE /subscriptions?url=...: stop webhook delivery to `url`."""
        return await self.request(token, "DELETE", "/subscriptions", params={"url": url})

    async def get_updates(self, token: str, *, marker: int | None = None, timeout: int = 30,
                          limit: int = 100, types: list[str] | None = None) -> dict[str, Any]:
        """GET /updates (long polling): {"updates": [...], "marker": int|None}; pass the marker back next."""
        params: dict[str, Any] = {"marker": marker, "timeout": timeout, "limit": limit,
                                  "types": ",".join(types) if types else None}
        return await self.request(token, "GET", "/updates", params=params, long_poll=timeout)

    async def me(self, token: str) -> dict[str, Any]:
        """GET /me: the bot's own user record (checks that a token works)."""
        return await self.request(token, "GET", "/me")
