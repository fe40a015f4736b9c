"""What MAX takes as a webhook address: since May 2026 https on port 443 at a host name (public CA)."""
from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

HTTPS_PORT = 443
# The sentence said wherever an address is refused: what MAX needs, so a person can fix it.
NEEDS = ("MAX delivers only to an https:// address on port 443 at a host name with a certificate from a public"
         " authority (no IP address, no other port, no self-signed certificate)")


def webhook_path(bot_id: str) -> str:
    """The path of a bot's webhook route on this server."""
    return f"/webhooks/max/{bot_id}"


def webhook_url(base: str, bot_id: str) -> str:
    """Where MAX should deliver a bot's updates, given this server's public base address."""
    return base.rstrip("/") + webhook_path(bot_id)


def webhook_url_problem(url: str) -> str | None:
    """Why MAX would refuse `url` as a webhook, in a few words; None when it takes it."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        return "its port is not a number"
    if parts.scheme != "https" or not parts.hostname:
        return "it is not an https:// address"
    if port not in (None, HTTPS_PORT):
        return f"it uses port {port}"
    try:
        ipaddress.ip_address(parts.hostname)
    except ValueError:
        return None
    return "it names an IP address, not a host"


def refusal(url: str) -> str | None:
    """The whole sentence for a refused address (what is wrong, then what MAX needs); None when fine."""
    why = webhook_url_problem(url)
    return f"{url!r} will not be accepted: {why}. {NEEDS}." if why else None
