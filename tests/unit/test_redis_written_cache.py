"""The Redis store's memory of its own last writes stays bounded and keeps the newest."""
from __future__ import annotations

from server.runtime.stores.written import Written


def test_the_written_dialogs_stay_bounded_and_the_newest_are_kept() -> None:
    written = Written(written_max=80, decoded_max=16)
    for n in range(1000):
        written.remember(f"u{n}", b"raw%d" % n, {"n": n})
        written.remember("active", b"a%d" % n, {"a": n})  # one dialog in constant use is never forgotten
        assert len(written.raw) <= 90 and len(written.decoded) <= 18
    assert written.raw["active"] == b"a999" and written.decoded["active"] == {"a": 999}
    assert "u999" in written.raw and "u999" in written.decoded
    assert "u0" not in written.raw and "u900" not in written.decoded  # the oldest went first
    assert list(written.raw)[-2:] == ["u999", "active"]


def test_a_forgotten_or_dropped_dialog_is_read_again() -> None:
    written = Written()
    written.remember("a", b"one", {"n": 1})
    written.remember("b", b"", None)  # the turn dropped the dialog: remembered as gone, nothing decoded
    written.forget("a")
    assert written.raw == {"b": b""} and written.decoded == {}
