"""Outbound webhook actions that cannot reach the server's own network: checked at connect time, capped, timed out."""
# Which addresses are internal is one rule, flows.egress (the loader applies it to literal hosts); here it is
# applied to the addresses a name resolves to and to the peer a connection really reached.
from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import httpx

from flows.egress import allowed, refused_address

RESPONSE_LIMIT = 64 * 1024
TIMEOUT = 10.0
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]


class EgressRefused(httpx.HTTPError):
    """The action's address is not one the server may call; retrying cannot help."""

    permanent = True


@dataclass(frozen=True, slots=True)
class Allow:
    """BOTFLOW_ACTION_ALLOW: host names and networks actions may reach although they are internal."""

    entries: tuple[str, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> Allow:
        """From "crm.local", "10.0.0.0/8", "127.0.0.1"; ValueError names an entry that is neither."""
        kept = []
        for entry in (e.strip() for e in entries):
            if not entry:
                continue
            try:
                ipaddress.ip_network(entry.strip("[]"), strict=False)
            except ValueError:
                if not is_host_name(entry):
                    raise ValueError(entry) from None
            kept.append(entry.lower().rstrip("."))
        return cls(tuple(kept))

    def permits(self, host: str, address: IPAddress) -> bool:
        return allowed(host.lower().rstrip("."), address, self.entries)


def is_host_name(value: str) -> bool:
    labels = value.rstrip(".").split(".")
    return 0 < len(value) <= 253 and all(
        0 < len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii()
        and not label.startswith("-") and not label.endswith("-") for label in labels)


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the operating system gives for `host` (also numeric forms such as 127.1 or 0x7f000001)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def pick_address(host: str, port: int, allow: Allow, resolve: Resolver = system_resolver) -> str:
    """The first address of `host` the server may call; EgressRefused when every one is internal."""
    try:
        candidates = [host.strip("[]")] if _literal(host) else await resolve(host, port)
    except OSError as exc:
        raise httpx.ConnectError(f"cannot resolve {host}: {exc}") from exc
    reasons = []
    for candidate in candidates:
        address = ipaddress.ip_address(candidate.split("%", 1)[0])
        reason = refused_address(address)
        if reason is None or allow.permits(host, address):
            return str(address)
        reasons.append(f"{address} ({reason})")
    raise EgressRefused(f"{host} is an internal address: {', '.join(reasons) or 'nothing'}; "
                        "list it in BOTFLOW_ACTION_ALLOW to let actions reach it.")


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class ActionReply:
    """What the action's server answered: status, at most RESPONSE_LIMIT bytes of body, the address used."""

    status_code: int
    body: bytes
    truncated: bool
    address: str


async def post_action(url: str, data: Any, *, allow: Allow, timeout: float = TIMEOUT, limit: int = RESPONSE_LIMIT,
                      client: httpx.AsyncClient | None = None, resolve: Resolver = system_resolver) -> ActionReply:
    """POST `data` as JSON to `url` on an address that is not internal unless allowed; EgressRefused otherwise."""
    # The host is resolved here and the request goes to the checked address, so a second, rebinding DNS answer
    # is never used; the peer is checked again once connected; redirects are not followed; at most `limit`
    # bytes are read and the whole call ends after `timeout` seconds (httpx.TimeoutException). Network
    # failures are httpx.HTTPError, like any httpx call.
    target = httpx.URL(url)
    if target.scheme not in ("http", "https") or not target.host:
        raise EgressRefused(f"{url[:200]} is not an http:// or https:// address.")
    port = target.port or (443 if target.scheme == "https" else 80)
    own = client is None
    client = client or httpx.AsyncClient(trust_env=False, follow_redirects=False)
    try:
        async with asyncio.timeout(timeout):
            address = await pick_address(target.host, port, allow, resolve)
            extensions: dict[str, Any] = {"trace": _peer_guard(target.host, allow)}
            if target.scheme == "https" and not _literal(target.host):
                extensions["sni_hostname"] = target.host
            async with client.stream("POST", target.copy_with(host=address), json=data, timeout=timeout,
                                     headers={"Host": target.netloc.decode("ascii")}, extensions=extensions,
                                     follow_redirects=False) as response:
                _check_peer(response, target.host, allow)
                body, truncated = await _read_capped(response, limit)
    except TimeoutError:
        raise httpx.ReadTimeout(f"{target.host} did not answer within {timeout:g} s") from None
    finally:
        if own:
            await client.aclose()
    return ActionReply(response.status_code, body, truncated, address)


def _peer_refusal(stream: Any, host: str, allow: Allow) -> str | None:
    """Why the address a connection really reached is refused, or None."""
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    if not peer:
        return None
    address = ipaddress.ip_address(str(peer[0]).split("%", 1)[0])
    reason = refused_address(address)
    if reason is None or allow.permits(host, address):
        return None
    return f"{host} connected to {address}, {reason}; list it in BOTFLOW_ACTION_ALLOW to let actions reach it."


def _peer_guard(host: str, allow: Allow) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    """An httpcore trace hook that closes a new connection to a refused address before anything is sent."""

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            reason = _peer_refusal(stream, host, allow)
            if reason is not None and stream is not None:  # a refusal always names a stream's peer
                await stream.aclose()
                raise EgressRefused(reason)

    return trace


def _check_peer(response: httpx.Response, host: str, allow: Allow) -> None:
    """The same rule for a connection the pool reused, which the trace hook never saw."""
    reason = _peer_refusal(response.extensions.get("network_stream"), host, allow)
    if reason is not None:
        raise EgressRefused(reason)


async def _read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    chunks, size = [], 0
    async for chunk in response.aiter_raw():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False
