"""Bounds on documents and dialogs (flow-format.md, "Limits"): one place for every number."""
from __future__ import annotations

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
