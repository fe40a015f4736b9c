"""The dialogs this process wrote last, so their next turn reads them without a round trip to Redis."""
from __future__ import annotations

import itertools
from typing import Any

# Dialogs whose last write is remembered (`begin(optimistic=True)`); about 200 bytes each. Past an eighth
# more, the oldest eighth is forgotten at once: dropping one per write, the search for a dict's first live
# entry behind the ones deleted before it cost a few microseconds a write (6x the batch).
WRITTEN_MAX = 50_000
# Of those, the newest also kept as the dict that was written (about 1.2 KB each), so a dialog in active
# talk is not decoded again on its next turn; turns copy what they change (`Dialog.from_dict`).
DECODED_MAX = 4096


class Written:
    """Base key -> the dialog's bytes as this process last wrote them (b"" when it dropped it), and the
    newest of those as the dict that was written; the dicts' order is the order of writes."""

    __slots__ = ("raw", "decoded", "written_max", "decoded_max")

    def __init__(self, written_max: int = WRITTEN_MAX, decoded_max: int = DECODED_MAX) -> None:
        self.raw: dict[str, bytes] = {}
        self.decoded: dict[str, dict[str, Any]] = {}
        self.written_max, self.decoded_max = written_max, decoded_max

    def remember(self, base: str, raw: bytes, dialog: dict[str, Any] | None) -> None:
        written, decoded = self.raw, self.decoded
        written.pop(base, None)  # re-inserted last, so the order stays the order of writes
        written[base] = raw
        if len(written) > self.written_max + self.written_max // 8:
            _drop_oldest(written, self.written_max // 8)
        decoded.pop(base, None)
        if dialog is not None:
            decoded[base] = dialog
            if len(decoded) > self.decoded_max + self.decoded_max // 8:
                _drop_oldest(decoded, self.decoded_max // 8)

    def forget(self, base: str) -> None:
        """The dialog may have changed without this process: its next turn reads it from Redis."""
        self.raw.pop(base, None)
        self.decoded.pop(base, None)


def _drop_oldest(cache: dict[str, Any], n: int) -> None:
    for key in list(itertools.islice(cache, n)):
        del cache[key]
