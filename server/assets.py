"""Static assets as browsers expect them: versioned URLs cached for a year, the rest revalidated by ETag.

Pages name an asset through `asset_url("css/app.css")`, which gives `/static/v/<version>/css/app.css`: the
version is a digest of every file under static/, so any change to any file gives every asset a new URL, and
an ES module's relative imports (`./editor/store.js`) stay under the same version. Those answers are
`immutable`. A plain `/static/<name>` (an address written into a script, an old bookmark) and a versioned URL
of another release (a page from one replica, its assets from another during a rolling upgrade) get the
current file with `no-cache`: the browser keeps it but asks with If-None-Match / If-Modified-Since each
time, and gets 304 while it is unchanged.
"""
from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import threading
import time
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "public, no-cache"
VERSIONED_PREFIX = "v/"
RESCAN_SECONDS = 1.0  # a file edited while the server runs (development) gets a new version within this
COMPRESS_FROM = 1024  # bytes; below this gzip's header and the round trip outweigh what it saves

mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("image/svg+xml", ".svg")


@dataclass(frozen=True, slots=True)
class Asset:
    """One file: its bytes and what the conditional headers need."""

    body: bytes
    etag: str
    last_modified: str
    modified: int  # whole seconds, as Last-Modified can say them
    media_type: str
    stamp: tuple[int, int]  # (mtime_ns, size) when read: a change means read it again


class AssetIndex:
    """Every file under one directory, with its digest; the version digests them all."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.files: dict[str, Asset] = {}
        self.version = ""
        self._checked = 0.0
        self._gzipped: dict[str, bytes | None] = {}  # by ETag: compressed once, at the first request
        self._lock = threading.Lock()
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Re-read files whose size or time changed (at most once per RESCAN_SECONDS)."""
        now = time.monotonic()
        if not force and now - self._checked < RESCAN_SECONDS:
            return
        with self._lock:
            self._checked = now
            found: dict[str, Asset] = {}
            for folder, _, names in os.walk(self.root, followlinks=True):
                for filename in names:
                    path = Path(folder) / filename
                    name = path.relative_to(self.root).as_posix()
                    try:
                        info = path.stat()
                        known = self.files.get(name)
                        stamp = (info.st_mtime_ns, info.st_size)
                        found[name] = known if known and known.stamp == stamp else _read(path, stamp)
                    except OSError:  # vanished between the listing and the read
                        continue
            if found.keys() != self.files.keys() or any(found[n] is not self.files[n] for n in found):
                digest = hashlib.sha256()
                for name in sorted(found):
                    digest.update(f"{name}\0{found[name].etag}\0".encode())
                self.files, self.version = found, digest.hexdigest()[:12]

    def url(self, name: str) -> str:
        """The versioned address of `name` (a path under static/, without a leading slash)."""
        self.refresh()
        return f"/static/{VERSIONED_PREFIX}{self.version}/{name.lstrip('/')}"

    def gzipped(self, asset: Asset) -> bytes | None:
        """The asset gzipped (at the best level, once per file version), or None when that would not help."""
        if asset.etag not in self._gzipped:
            packed = None
            if len(asset.body) >= COMPRESS_FROM and _compressible(asset.media_type):
                packed = gzip.compress(asset.body, compresslevel=9, mtime=0)
                packed = packed if len(packed) < len(asset.body) * 0.9 else None
            self._gzipped[asset.etag] = packed
        return self._gzipped[asset.etag]

    def lookup(self, path: str) -> tuple[Asset | None, bool]:
        """The file a /static/<path> request names, and whether it may be cached as immutable."""
        self.refresh()
        immutable = False
        if path.startswith(VERSIONED_PREFIX):
            version, _, path = path[len(VERSIONED_PREFIX):].partition("/")
            immutable = version == self.version
        return self.files.get(path), immutable


def _read(path: Path, stamp: tuple[int, int]) -> Asset:
    body = path.read_bytes()
    modified = int(stamp[0] // 1_000_000_000)
    # Litestar names the charset of text/* itself (utf-8).
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    # Weak: the proxy or the app may compress the bytes on the way, which a strong validator would forbid.
    etag = f'W/"{hashlib.sha256(body).hexdigest()[:24]}"'
    return Asset(body, etag, formatdate(modified, usegmt=True), modified, media_type, stamp)


def _compressible(media_type: str) -> bool:
    return media_type.startswith(("text/", "image/svg+xml", "application/json", "application/javascript"))


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether an Accept-Encoding header allows gzip (named without q=0, or `*`)."""
    for part in (accept_encoding or "").lower().split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip() in ("gzip", "*"):
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def not_modified(asset: Asset, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """Whether the request's validators say the browser already has this file (RFC 9110, 13.1.2 and 13.2.2)."""
    if if_none_match is not None:  # when present, If-Modified-Since is ignored
        tags = [tag.strip() for tag in if_none_match.split(",")]
        mine = asset.etag.removeprefix("W/")
        return "*" in tags or any(tag.removeprefix("W/") == mine for tag in tags)
    if if_modified_since is not None:
        try:
            since = parsedate_to_datetime(if_modified_since).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return False  # an unreadable date is ignored, as the RFC says
        return asset.modified <= since
    return False


_indexes: dict[Path, AssetIndex] = {}
_indexes_lock = threading.Lock()


def index_for(root: Path) -> AssetIndex:
    """The process's one index of `root` (apps made again in tests share it)."""
    key = root.resolve()
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None:
            index = _indexes[key] = AssetIndex(key)
        return index
