"""A Lua script for Redis, called by its SHA: shared by the stores and the channels' send-rate schedule."""
from __future__ import annotations

import hashlib


class Script:
    """A Lua script called by SHA, loaded on first NOSCRIPT."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
