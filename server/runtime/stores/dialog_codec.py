"""How the Redis store writes a dialog: a MessagePack array in a fixed field order, without key names.

Field names were over half of a stored dialog (200 bytes as a MessagePack map, 93 as this array, for the
registration example), and every idle dialog keeps one. Reading also takes the older shapes, a JSON
object or a MessagePack map, so dialogs written before go on working until they end.
"""
from __future__ import annotations

from typing import Any

import msgspec

# The order is the format: append new names at the end, never reorder or remove one.
FIELDS = ("flow", "version", "state", "data", "history", "attempts", "started_at", "updated_at",
          "entered_at", "reminded", "timeout_held", "chat_id", "due")
_POSITION = {name: index for index, name in enumerate(FIELDS)}
# Stands for a field the dialog does not have (None is a value a field may hold).
_ABSENT = msgspec.msgpack.Ext(1, b"")
_ARRAY_HEADS = frozenset({*range(0x90, 0xA0), 0xDC, 0xDD})

_pack = msgspec.msgpack.encode
_unpack = msgspec.msgpack.decode


def encode(session: dict[str, Any]) -> bytes:
    """The dialog as an array of its FIELDS' values (trailing absent ones left off), then a map of any
    other keys it has, so nothing is ever dropped."""
    values: list[Any] = [_ABSENT] * len(FIELDS)
    extra: dict[str, Any] = {}
    last = -1
    for name, value in session.items():
        index = _POSITION.get(name)
        if index is None:
            extra[name] = value
        else:
            values[index] = value
            last = max(last, index)
    if extra:
        return _pack([*values, extra])
    return _pack(values[:last + 1])


def decode(raw: bytes) -> dict[str, Any]:
    """A stored dialog in any shape the store has written: this array, a MessagePack map or JSON."""
    if raw[:1] == b"{":
        return msgspec.json.decode(raw)
    found = _unpack(raw)
    if raw[0] not in _ARRAY_HEADS:
        return found
    session = {name: value for name, value in zip(FIELDS, found) if not isinstance(value, msgspec.msgpack.Ext)}
    if len(found) > len(FIELDS):
        session.update(found[len(FIELDS)])
    return session
