"""The masking rule (`flows.masking`) and a turn's timeline record written with it."""
from __future__ import annotations

import json

import pytest

from flows.engine import step
from flows.load import load
from flows.masking import MASK, Masking, mask_text, mask_value, replacer, secrets_of
from flows.dialog import Dialog, Update
from server.runtime import timeline

FLOW = {
    "format": "botflow/v1", "id": "reg", "title": "Reg", "start": "ask_phone",
    "states": [
        {"id": "ask_phone", "say": [{"text": "Телефон?"}], "input": {"type": "phone", "save_as": "phone"}},
        {"id": "ask_email", "say": [{"text": "Записали {phone}. Почта?"}],
         "input": {"type": "email", "save_as": "email"}},
        {"id": "ask_city", "say": [{"text": "Город? (пишем на {email})"}], "input": {"type": "text", "save_as": "city"}},
        {"id": "done", "final": True, "say": [{"text": "Готово, {city}: {phone}, {email}"}]},
    ],
    "transitions": [
        {"id": "t1", "from": "ask_phone", "to": "ask_email", "on": "input"},
        {"id": "t2", "from": "ask_email", "to": "ask_city", "on": "input"},
        {"id": "t3", "from": "ask_city", "to": "done", "on": "input"},
    ],
}


@pytest.mark.parametrize(("value", "shown"), [
    ("ivan.petrov@example.com", "i***@example.com"),
    ("+7 916 123-45-67", "+* *** ***-**-67"),
    ("+79161234567", "+*********67"),
    ("89161234567", "*********67"),
    ("Иван Петров", MASK),
    ("12", MASK),  # too short to be a phone: nothing of it is shown
    ("", ""),
])
def test_a_masked_text_shows_only_its_shape(value: str, shown: str) -> None:
    assert mask_text(value) == shown


def test_an_input_type_decides_how_its_answer_reads() -> None:
    assert mask_text("not an email", "email") == MASK
    assert mask_text("a@b.ru", "phone") == MASK, "an email typed into a phone input shows nothing"
    assert mask_value({"type": "contact", "payload": {"name": "Иван"}}) == MASK
    assert mask_value(42) == MASK and mask_value(None) is None


def test_masked_keys_include_what_masked_inputs_save_to() -> None:
    flow = load(FLOW, allow=None)
    assert Masking(inputs=frozenset({"phone"})).masked_keys(flow) == {"phone"}
    assert Masking(frozenset({"city"}), frozenset({"email"})).masked_keys(flow) == {"city", "email"}
    assert Masking(frozenset({"city"})).input_kind(flow, "ask_city") == "text"
    assert Masking(frozenset({"city"})).input_kind(flow, "ask_phone") is None
    assert not Masking() and Masking(inputs=frozenset({"contact"}))


def test_every_occurrence_of_a_secret_is_replaced_longest_first() -> None:
    hide = replacer(secrets_of({"phone": "+79161234567", "name": "Ив"}, frozenset({"phone", "name"})))
    assert hide("+79161234567 и +79161234567, Ив") == f"+*********67 и +*********67, {MASK}"
    assert hide(None) is None


def _turns(masking: Masking, answers: list[str]) -> list[dict]:
    """Records of a dialog answered with `answers`, as the dispatcher writes them."""
    flow = load(FLOW, allow=None)
    session, records, now = None, [], 1000.0
    for text in ["/start", *answers]:
        update = Update.message(text)
        before = session.state if session else None
        result = step(flow, session, update, now)
        after = result.dialog.to_dict() if result.dialog else None
        records.append(timeline.record(now, update, before, result, after, masking=masking, flow=flow,
                                       before_data=session.data if session else None))
        session = Dialog.from_dict(after) if after else None
        now += 1
    return records


def test_a_transcript_never_holds_a_masked_value() -> None:
    masking = Masking(frozenset({"email"}), frozenset({"phone"}))
    records = _turns(masking, ["8 916 123-45-67", "oops", "ivan@example.com", "Москва"])
    stored = json.dumps(records, ensure_ascii=False)
    for secret in ("916", "123-45", "79161234567", "ivan@", "oops"):
        assert secret not in stored, secret
    answers = [rec["e"][0][3] for rec in records[1:]]
    assert answers == ["* *** ***-**-67", MASK, "i***@example.com", "Москва"]
    assert records[1]["s"]["data"] == {"phone": "+*********67"}
    replies = [e[3] for rec in records for e in rec["e"] if e[0] == "reply"]
    assert "Записали +*********67. Почта?" in replies
    assert "Готово, Москва: +*********67, i***@example.com" in replies
    completed = next(e[3] for e in records[-1]["e"] if e[0] == "completed")
    assert json.loads(completed) == {"phone": "+*********67", "email": "i***@example.com", "city": "Москва"}


def test_without_masking_the_transcript_keeps_what_was_said() -> None:
    records = _turns(Masking(), ["+79161234567"])
    assert records[1]["e"][0][3] == "+79161234567"
    assert records[1]["s"]["data"] == {"phone": "+79161234567"}


def test_a_replay_stops_before_a_masked_answer() -> None:
    from server.services.replay import recorded_dialogs

    masked = _turns(Masking(frozenset({"email"})), ["+79161234567", "ivan@example.com", "Москва"])
    assert [rec.get("m") for rec in masked] == [None, None, 1, None]
    assert [turn.update for turn in recorded_dialogs("1", masked).turns] == [
        {"text": "/start"}, {"text": "+79161234567"}]
    assert len(recorded_dialogs("1", _turns(Masking(), ["+79161234567"])).turns) == 2


def test_a_publish_note_masks_the_dialog_it_moved() -> None:
    flow = load(FLOW, allow=None)
    moved = {"flow": "reg", "version": 2, "state": "ask_city", "data": {"phone": "+79161234567", "city": "Тверь"},
             "history": []}
    rec = timeline.note(5.0, "migrated", "ask_city", "moved", moved, Masking(inputs=frozenset({"phone"})), flow)
    assert rec["s"]["data"] == {"phone": "+*********67", "city": "Тверь"}
    assert moved["data"]["phone"] == "+79161234567", "the dialog itself keeps the value"
