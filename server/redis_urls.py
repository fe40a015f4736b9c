"""Redis Sentinel URLs: `redis+sentinel://[:password@]host:port[,host:port...]/master-name[/db]`."""
from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

SCHEME = "redis+sentinel"
CLUSTER_SCHEME = "redis+cluster"


def parse(url: str) -> tuple[list[tuple[str, int]], str, int, str | None]:
    """(sentinels, master name, db, password) of a redis+sentinel:// URL; ValueError names what is wrong."""
    parts = urlsplit(url)
    if parts.scheme != SCHEME:
        raise ValueError(f"a Sentinel URL starts with {SCHEME}://")
    hosts = parts.netloc.rpartition("@")[2]
    password = unquote(parts.password) if parts.password else None
    sentinels = []
    for each in hosts.split(","):
        host, _, port = each.strip().rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{each!r} is not a sentinel's host:port (e.g. 10.0.0.5:26379)")
        sentinels.append((host.strip("[]"), int(port)))
    path = [p for p in parts.path.split("/") if p]
    if not path or len(path) > 2 or (len(path) == 2 and not path[1].isdigit()):
        raise ValueError("a Sentinel URL ends with the master's name and, optionally, the db: /mymaster or /mymaster/0")
    return sentinels, unquote(path[0]), int(path[1]) if len(path) == 2 else 0, password


def url_of(sentinels: str, master: str) -> str:
    """The Sentinel URL for BOTFLOW_REDIS_SENTINELS (host:port, comma separated) and BOTFLOW_REDIS_MASTER."""
    return f"{SCHEME}://{','.join(s.strip() for s in sentinels.split(','))}/{quote(master, safe='')}"


def cluster_nodes(url: str) -> tuple[list[tuple[str, int]], str | None]:
    """(startup nodes, password) of a redis+cluster:// URL; ValueError names what is wrong."""
    parts = urlsplit(url)
    if parts.scheme != CLUSTER_SCHEME:
        raise ValueError(f"a cluster URL starts with {CLUSTER_SCHEME}://")
    nodes = []
    for each in parts.netloc.rpartition("@")[2].split(","):
        host, _, port = each.strip().rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{each!r} is not a cluster node's host:port (e.g. 10.0.0.5:7000)")
        nodes.append((host.strip("[]"), int(port)))
    return nodes, unquote(parts.password) if parts.password else None
