"""How the Redis store writes a dialog: a MessagePack array in a fixed field order, without key names.

Field names were over half of a stored dialog (200 bytes as a MessagePack map, 93 as this array, for the
registration example), and every idle dialog keeps one. Reading also takes the older shapes, a JSON
object or a MessagePack map, so dialogs written before go on working until they end.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any

import msgspec

from flows.dialog import DIALOG_FIELDS

# The order is the format: the record's own fields (`flows.dialog.Dialog`) as they were when this array
# was made, then what the runtime keeps beside them; a field the record gains later (as `language` did)
# travels in the trailing map, so a stored dialog never changes meaning. Never reorder or remove one.
RUNTIME_FIELDS = ("chat_id", "due", "turn")
LATER_FIELDS = ("language",)
FIELDS = tuple(name for name in DIALOG_FIELDS if name not in LATER_FIELDS) + RUNTIME_FIELDS
_POSITION = {name: index for index, name in enumerate(FIELDS)}
_COUNT = len(FIELDS)
# Stands for a field the dialog does not have (None is a value a field may hold).
_ABSENT = msgspec.msgpack.Ext(1, b"")
_ARRAY_HEADS = frozenset({*range(0x90, 0xA0), 0xDC, 0xDD})

_pack = msgspec.msgpack.encode
_unpack = msgspec.msgpack.decode
_ABSENT_BYTES = _pack(_ABSENT)
_FULL = 0x90 + len(FIELDS)  # the head byte of an array of exactly the FIELDS


# A dialog with every one of FIELDS (webhook dialogs, nearly always), decoded in C field by field.
_Full = msgspec.defstruct("_Full", [(name, Any) for name in FIELDS], array_like=True)
_unpack_full = msgspec.msgpack.Decoder(_Full).decode
_as_dict = msgspec.structs.asdict
_all_fields = itemgetter(*FIELDS)


def encode(dialog: dict[str, Any]) -> bytes:
    """The dialog as an array of its FIELDS' values (trailing absent ones left off), then a map of any
    other keys it has, so nothing is ever dropped."""
    if len(dialog) == _COUNT:
        try:  # exactly the FIELDS, the usual case: their values picked in C, a third of the time of the loop
            return _pack(_all_fields(dialog))
        except KeyError:
            pass
    values = [dialog.get(name, _ABSENT) for name in FIELDS]
    absent = values.count(_ABSENT)
    if len(dialog) + absent > _COUNT:  # keys of its own: kept in a map after the fields
        return _pack([*values, {k: v for k, v in dialog.items() if k not in _POSITION}])
    if absent:
        while values and values[-1] is _ABSENT:
            values.pop()
    return _pack(values)


def decode(raw: bytes) -> dict[str, Any]:
    """A stored dialog in any shape the store has written: this array, a MessagePack map or JSON."""
    if raw and raw[0] == _FULL and _ABSENT_BYTES not in raw:  # all there (a false "absent" only takes the long way)
        return _as_dict(_unpack_full(raw))
    if raw[:1] == b"{":
        return msgspec.json.decode(raw)
    found = _unpack(raw)
    if raw[0] not in _ARRAY_HEADS:
        return found
    dialog = dict(zip(FIELDS, found))
    if len(found) < _COUNT or _ABSENT in found:  # only then can a field be missing (Ext values are equal by content)
        dialog = {name: value for name, value in dialog.items() if not isinstance(value, msgspec.msgpack.Ext)}
    if len(found) > _COUNT:
        dialog.update(found[_COUNT])
    return dialog
