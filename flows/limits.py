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
# Characters of a message or value read as a number; longer digit strings are text (a float ends near
# 1.8e308, and Python refuses to convert integers past 4300 digits).
MAX_NUMBER_TEXT = 300
# A YAML document's size once its aliases (*name) are written out: values plus characters of text. A
# document without aliases is about its byte size in these units; aliases may repeat parts, but not turn
# a few lines into millions of values (the "billion laughs").
MAX_EXPANDED_YAML = 4_000_000
# A flow document's size on the routes that take one: 10,000 states and 30,000 transitions with a layout,
# indented, are about 10 MB; webhooks and forms keep BOTFLOW_MAX_BODY (1 MiB).
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
# Problems one load error lists; the rest are counted in one more detail.
MAX_DETAILS = 1000
# Messages one update may send; what would follow is dropped and counted.
MAX_REPLIES = 10
# Characters worth rendering for one text: more than MAX_REPLIES parts of a message could hold.
RENDER_LIMIT = (MAX_REPLIES + 1) * 4000 + 1
# JSON spends at most 6 bytes on one character (a \u escape), and a little on each key and value.
_WORST_BYTES_PER_CHAR = 6
_OVERHEAD = 32
_TEXT = frozenset({str})
_SCALARS = frozenset({str, int, float, bool, type(None)})


def data_bytes(data: dict[str, Any]) -> int:
    """The size of a dialog's data as compact UTF-8 JSON (past the bound when it cannot be encoded at all)."""
    try:
        return len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
                   .encode("utf-8", "replace"))
    except (RecursionError, ValueError):  # nested too deeply, or a number too long to write
        return MAX_DATA_BYTES + 1


def data_fits(data: dict[str, Any]) -> bool:
    """Whether the data is at most MAX_DATA_BYTES as JSON; flat small data is settled without encoding."""
    values = data.values()
    kinds = set(map(type, values))
    if kinds <= _TEXT:  # the usual case: the lengths of the texts bound the size
        chars = sum(map(len, values)) + sum(map(len, data))
    elif kinds <= _SCALARS:
        chars = sum(map(len, data)) + sum([len(value) for value in values if value.__class__ is str])
    else:  # attachments, lists, objects: encode them
        return data_bytes(data) <= MAX_DATA_BYTES
    if _WORST_BYTES_PER_CHAR * chars + _OVERHEAD * len(data) <= MAX_DATA_BYTES:
        return True
    return data_bytes(data) <= MAX_DATA_BYTES
