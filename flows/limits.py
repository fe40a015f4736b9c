"""Bounds on documents and dialogs (flow-format.md, "Limits"): one place for every number."""
from __future__ import annotations

import json
from typing import Any

# Numbers in a document, in magnitude: the largest integer a JSON reader keeps exactly (2^53).
MAX_NUMBER = 2 ** 53
# `session_ttl`, `reminder.after` and a timeout's `after`: a year, in seconds.
MAX_SECONDS = 31_536_000
# Containers nested in a document, the document itself being level 1.
MAX_DEPTH = 64
# A dialog's data as UTF-8 JSON.
MAX_DATA_BYTES = 64 * 1024
# Messages one update may send; what would follow is dropped and counted.
MAX_REPLIES = 10
# Characters worth rendering for one text: more than MAX_REPLIES parts of a message could hold.
RENDER_LIMIT = (MAX_REPLIES + 1) * 4000 + 1
# JSON spends at most 6 bytes on one character (a \u escape), and a little on each key and value.
_WORST_BYTES_PER_CHAR = 6
_OVERHEAD = 32


def data_bytes(data: dict[str, Any]) -> int:
    """The size of a dialog's data as UTF-8 JSON."""
    return len(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8", "replace"))


def data_fits(data: dict[str, Any]) -> bool:
    """Whether the data is at most MAX_DATA_BYTES as JSON; flat small data is settled without encoding."""
    total = 2
    for key, value in data.items():
        kind = type(value)
        if kind is str:
            total += _WORST_BYTES_PER_CHAR * (len(key) + len(value)) + _OVERHEAD
        elif kind is int or kind is float or kind is bool or value is None:
            total += _WORST_BYTES_PER_CHAR * len(key) + _OVERHEAD
        else:
            return data_bytes(data) <= MAX_DATA_BYTES
        if total > MAX_DATA_BYTES:
            return data_bytes(data) <= MAX_DATA_BYTES
    return True
