"""Where a webhook action may post the dialog's data: never to this machine, a private network or cloud metadata.

`refused_host(host, allow)` is the one rule: the loader applies it to literal hosts in a document,
and the sender to the addresses a name resolves to, so a name that rebinds to 127.0.0.1 fails too.
`allow` holds what the deployment permits anyway (`BOTFLOW_ACTION_ALLOW`): host names, addresses
or networks in CIDR notation, for an on-premises CRM.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import idna

from flows.checks import item, join

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Names that always mean this machine or a cloud's metadata service.
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                          "metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"})
_METADATA = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("100.100.100.200"),
                       ipaddress.ip_address("fd00:ec2::254"), ipaddress.ip_address("169.254.170.2")})
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, also home to some metadata services


def _legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address of `127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1`: forms inet_aton (and so curl) reads."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers: list[int] = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            elif part.isdigit() and part.isascii():
                numbers.append(int(part))
            else:
                return None
        except ValueError:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(value)


def literal_address(host: str) -> Address | None:
    """The IP address a host names literally (`[::1]`, `127.1`, ...), or None for a name."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    bare = bare.split("%", 1)[0]  # an IPv6 zone id names an interface, not another address
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        return _legacy_ipv4(bare)


def refused_address(address: Address) -> str | None:
    """Why the server must not call this address on a flow's behalf ("a loopback address ..."), or None."""
    teredo = getattr(address, "teredo", None)
    mapped = (getattr(address, "ipv4_mapped", None) or getattr(address, "sixtofour", None)
              or (teredo[1] if teredo else None))
    if mapped is not None:
        return refused_address(mapped)
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_loopback:
        return "a loopback address (this machine)"
    if address.is_unspecified:
        return "the unspecified address (this machine)"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private or (isinstance(address, ipaddress.IPv4Address) and address in _SHARED):
        return "a private network address"
    if address.is_reserved:
        return "a reserved address"
    return None


def allowed(host: str, address: Address | None, allow: Iterable[str]) -> bool:
    """Whether the deployment's allow list names this host, or a network holding its address."""
    for entry in allow:
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == host:
            return True
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry.strip("[]"), strict=False):
                    return True
            except ValueError:
                continue
    return False


def refused_host(host: Any, allow: Iterable[str] = ()) -> str | None:
    """Why a webhook may not post to `host` (a name or a literal address), or None when it may."""
    if not isinstance(host, str) or not host:
        return "it names no host"
    name = host.strip().rstrip(".").lower()
    address = literal_address(name)
    if allowed(name, address, allow):
        return None
    if address is not None:
        return refused_address(address)
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return "a name for this machine or a metadata service"
    return None


def refused_url(url: str, allow: Iterable[str] = ()) -> str | None:
    """`refused_host` for the host of an http(s) URL; a URL without a readable host is refused."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return "its host cannot be read"
    if host and not host.isascii():
        try:  # as the sender's HTTP client will write it (IDNA 2008): `①②⑦.0.0.1` is no name at all
            idna.encode(host)
        except UnicodeError:
            return "a host name that cannot be written as an internet (IDNA) name"
    return refused_host(host or "", allow)


def webhook_problems(doc: Any, allow: Iterable[str] = ()) -> list[dict[str, str]]:
    """One detail per webhook action of a raw document whose URL names a refused host."""
    details: list[dict[str, str]] = []
    transitions = doc.get("transitions") if isinstance(doc, dict) else None
    if not isinstance(transitions, list):
        return details
    for t, transition in enumerate(transitions):
        actions = transition.get("actions") if isinstance(transition, dict) else None
        if not isinstance(actions, list):
            continue
        for a, action in enumerate(actions):
            url = action.get("url") if isinstance(action, dict) and action.get("type") == "webhook" else None
            if not isinstance(url, str):
                continue
            why = refused_url(url, allow)
            if why:
                details.append({
                    "path": join(item(join(item("transitions", t), "actions"), a), "url"),
                    "message": f"this address is {why}; a webhook action may not post the dialog's data there."
                               " Use the service's public address, or have the deployment allow this host"})
    return details
