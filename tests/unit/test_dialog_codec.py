"""The Redis store's dialog encoding gives back exactly the dialog it was given, and reads older shapes."""
from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from server.runtime.stores import dialog_codec

REGISTRATION = {
    "flow": "registration", "version": 1, "state": "ask_phone", "data": {"name": "Иван"},
    "history": ["ask_name"], "attempts": 0, "started_at": 1796145674.7631946, "updated_at": 1796145674.7646031,
    "entered_at": 1796145674.7646031, "reminded": False, "timeout_held": False, "chat_id": 1234,
    "due": 1796146574.7646031, "turn": 2,
}

values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
names = st.sampled_from([*dialog_codec.FIELDS, "sandbox", "locale", ""]) | st.text(max_size=6)


@given(st.dictionaries(names, values, max_size=16))
def test_any_dialog_comes_back_as_it_was(session: dict[str, Any]) -> None:
    assert dialog_codec.decode(dialog_codec.encode(session)) == session


def test_a_missing_field_stays_missing_and_none_stays_none() -> None:
    without_due = {k: v for k, v in REGISTRATION.items() if k != "due"}
    assert "due" not in dialog_codec.decode(dialog_codec.encode(without_due))
    gap = {**without_due, "history": None}
    del gap["attempts"]
    back = dialog_codec.decode(dialog_codec.encode(gap))
    assert back == gap and back["history"] is None and "attempts" not in back


def test_the_array_is_less_than_half_the_map() -> None:
    packed = dialog_codec.encode(REGISTRATION)
    assert len(packed) * 2 < len(msgspec.msgpack.encode(REGISTRATION))


def test_dialogs_written_as_json_or_a_map_are_still_read() -> None:
    assert dialog_codec.decode(msgspec.json.encode(REGISTRATION)) == REGISTRATION
    assert dialog_codec.decode(msgspec.msgpack.encode(REGISTRATION)) == REGISTRATION


@given(st.fixed_dictionaries({name: values for name in dialog_codec.FIELDS}))
def test_a_dialog_with_every_field_comes_back_as_it_was(session: dict[str, Any]) -> None:
    # The usual shape, read by the decoder's shortcut for an array of exactly the fields.
    back = dialog_codec.decode(dialog_codec.encode(session))
    assert back == session and list(back) == list(dialog_codec.FIELDS)


def test_a_gap_between_fields_stays_a_gap_in_a_full_length_array() -> None:
    no_chat = {k: v for k, v in REGISTRATION.items() if k != "chat_id"}  # an API-started dialog: due, no chat
    back = dialog_codec.decode(dialog_codec.encode(no_chat))
    assert back == no_chat and "chat_id" not in back
    # A value that holds the bytes an absent field is written as is a value, not a gap.
    odd = {**REGISTRATION, "data": {"x": "\x00\x01", "n": 50945}}
    assert dialog_codec.decode(dialog_codec.encode(odd)) == odd


def test_a_dialog_written_before_the_turn_counter_reads_without_one() -> None:
    before = {k: v for k, v in REGISTRATION.items() if k != "turn"}
    written = msgspec.msgpack.encode([before[name] for name in dialog_codec.FIELDS[:-1]])
    assert dialog_codec.decode(written) == before


def test_as_many_keys_as_fields_but_one_of_its_own_keeps_them_all() -> None:
    # As many keys as fields, one not a field: the shortcut for exactly the fields must not take it.
    swapped = {**{k: v for k, v in REGISTRATION.items() if k != "reminded"}, "locale": "ru"}
    assert len(swapped) == len(dialog_codec.FIELDS)
    back = dialog_codec.decode(dialog_codec.encode(swapped))
    assert back == swapped and "reminded" not in back


def test_the_stored_array_keeps_its_order_as_the_record_grows() -> None:
    # Dialogs already stored are read by position: the record's fields may only be added (after the
    # array, in its trailing map), never reordered, or an old dialog would change meaning.
    assert dialog_codec.FIELDS == ("flow", "version", "state", "data", "history", "attempts", "started_at",
                                   "updated_at", "entered_at", "reminded", "timeout_held", "chat_id", "due", "turn")
    stored = msgspec.msgpack.encode([*REGISTRATION.values(), {"language": "en"}])
    assert dialog_codec.decode(stored) == {**REGISTRATION, "language": "en"}
