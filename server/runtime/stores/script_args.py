"""The Lua scripts' arguments as one MessagePack array: hiredis frames every argument with a `sprintf`
and a copy and writes a float with `repr()`, so forty arguments cost a tenth of a turn; one array costs
the client a fraction of that, and Redis's `cmsgpack.unpack` little more than its own argument parsing.

Redis's MessagePack reader has no binary type, so bytes travel as MessagePack strings (`text`), and
times as their exact text (`time`), as they did as separate arguments.
"""
from __future__ import annotations

import msgspec

pack = msgspec.msgpack.Encoder().encode
_Raw = msgspec.Raw
_FIXSTR = [bytes((0xA0 | n,)) for n in range(32)]


def text(data: bytes) -> msgspec.Raw:
    """Bytes as a MessagePack string, which the scripts read as a Lua string of the same bytes."""
    n = len(data)
    if n < 32:
        return _Raw(_FIXSTR[n] + data)
    if n < 256:
        return _Raw(b"\xd9%c%b" % (n, data))
    if n < 65536:
        return _Raw(b"\xda" + n.to_bytes(2, "big") + data)
    return _Raw(b"\xdb" + n.to_bytes(4, "big") + data)


def time(value: float) -> msgspec.Raw:
    """A time as the shortest text that reads back exact: repr()'s digits, at a tenth of repr()'s cost."""
    return text(msgspec.json.encode(value))
