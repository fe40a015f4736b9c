"""The registration dialog from the source article, driven through step()."""
from __future__ import annotations

import pytest

from engine_strategies import Talk, example, texts
from flows.engine import step
from flows.dialog import Update


@pytest.fixture(scope="module")
def registration():
    return example("registration")


def test_registration_happy_path(registration):
    d = Talk(registration)
    r = d.send("/start")
    assert d.state == "ask_name"
    assert texts(r) == ["Привет! Как вас зовут?"]

    r = d.send("Иван")
    assert d.state == "ask_phone"
    assert d.data["name"] == "Иван"
    assert r.transition == "name_ok"
    assert texts(r) == ["Введите телефон в формате +7XXXXXXXXXX"]

    r = d.send("+79991234567")
    assert d.state == "ask_email"
    assert d.data["phone"] == "+79991234567"
    assert r.transition == "phone_ok"
    assert r.reason == 'Input "+79991234567" is a valid phone; transition phone_ok fired.'

    d.send("ivan@example.com")
    assert d.state == "ask_pdn"
    assert d.data["email"] == "ivan@example.com"

    r = d.send("да")
    assert r.dialog is None
    assert r.outcome == "completed"
    assert r.transition == "pdn_yes_text"
    assert texts(r) == ["Готово! Имя: Иван, телефон: +79991234567"]
    assert r.completed is not None
    assert r.completed.state == "confirmed"
    assert r.completed.data == {"name": "Иван", "phone": "+79991234567", "email": "ivan@example.com",
                                "pdn_accepted": "yes"}


def test_invalid_phone_keeps_the_dialog_in_place(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван Петров")
    assert d.state == "ask_phone"
    assert d.data["name"] == "Иван Петров"

    r = d.send("не телефон")
    assert d.state == "ask_phone"
    assert "phone" not in d.data
    assert texts(r) == ["Невалидный телефон. Повторите."]
    assert r.outcome == "input_invalid"
    assert r.transition is None
    assert d.dialog.attempts == 1

    r = d.send("+79991234567")
    assert d.state == "ask_email"
    assert d.data["phone"] == "+79991234567"
    assert d.dialog.attempts == 0


def test_phone_is_saved_normalised(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван")
    d.send(" 8 (999) 123-45-67 ")
    assert d.data["phone"] == "+79991234567"


def test_cancel_drops_the_dialog(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван")
    r = d.send("/cancel")
    assert r.dialog is None
    assert r.outcome == "command:cancel"
    assert texts(r) == ["Регистрация отменена."]
    # The next message opens a fresh dialog without the old data.
    r = d.send("привет")
    assert d.state == "ask_name"
    assert d.data == {}
    assert r.outcome == "opened"


def test_cancel_matches_trimmed_and_case_insensitive(registration):
    d = Talk(registration)
    d.send("/start")
    r = d.send("  ОТМЕНА ")
    assert r.dialog is None
    assert texts(r) == ["Регистрация отменена."]


def test_start_restarts_with_empty_data(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван")
    d.send("+79991234567")
    assert d.state == "ask_email"
    r = d.send("/start")
    assert d.state == "ask_name"
    assert d.data == {}
    assert d.dialog.history == []
    assert r.outcome == "command:restart"
    assert texts(r) == ["Привет! Как вас зовут?"]


def test_back_returns_and_reprompts(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван")
    d.send("+79991234567")
    assert d.state == "ask_email"
    r = d.send("назад")
    assert d.state == "ask_phone"
    assert texts(r) == ["Введите телефон в формате +7XXXXXXXXXX"]
    # back keeps the collected data
    assert d.data["phone"] == "+79991234567"
    r = d.send("/back")
    assert d.state == "ask_name"
    assert texts(r) == ["Привет! Как вас зовут?"]
    # at the start, back only re-prompts
    r = d.send("back")
    assert d.state == "ask_name"
    assert texts(r) == ["Привет! Как вас зовут?"]
    assert r.outcome == "command:back"


def test_help_replies_and_stays(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван")
    r = d.send("/help")
    assert d.state == "ask_phone"
    assert texts(r) == ["Отвечайте на вопросы по одному. /cancel — отменить, назад — вернуться на шаг."]
    assert r.outcome == "command:help"
    assert d.data == {"name": "Иван"}


def test_invalid_name_sends_the_error(registration):
    d = Talk(registration)
    d.send("/start")
    r = d.send("И")
    assert d.state == "ask_name"
    assert texts(r) == ["Имя 2-80 символов. Повторите."]


def test_consent_button_confirms(registration):
    d = Talk(registration)
    for text in ("/start", "Иван", "+79991234567", "ivan@example.com"):
        d.send(text)
    r = d.send(Update.button("yes"))
    assert r.transition == "pdn_yes_button"
    assert texts(r) == ["Готово! Имя: Иван, телефон: +79991234567"]
    assert r.dialog is None


def test_consent_prompt_carries_its_keyboard(registration):
    d = Talk(registration)
    for text in ("/start", "Иван", "+79991234567"):
        d.send(text)
    r = d.send("ivan@example.com")
    assert r.replies[0].buttons == [[{"text": "Да", "payload": "yes"}, {"text": "Нет", "payload": "no"}]]


def test_anything_else_at_consent_refuses(registration):
    d = Talk(registration)
    for text in ("/start", "Иван", "+79991234567", "ivan@example.com"):
        d.send(text)
    r = d.send(Update.button("no"))
    assert r.transition == "pdn_no"
    assert texts(r) == ["Без согласия не можем продолжить."]
    assert r.completed.state == "refused"


def test_stale_button_in_an_input_state_gets_fallback_and_reprompt(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван")
    r = d.send(Update.button("yes"))
    assert d.state == "ask_phone"
    assert texts(r) == ["Не понял. Повторите, пожалуйста.", "Введите телефон в формате +7XXXXXXXXXX"]
    assert r.outcome == "fallback"
    assert d.dialog.attempts == 0


def test_first_message_opens_and_is_not_evaluated(registration):
    r = step(registration, None, Update.message("Иван"), 10.0)
    assert r.dialog.state == "ask_name"
    assert r.dialog.data == {}
    assert texts(r) == ["Привет! Как вас зовут?"]
    assert r.dialog.flow == "registration"
    assert r.dialog.started_at == r.dialog.updated_at == r.dialog.entered_at == 10.0


def test_cancel_without_a_dialog_only_replies(registration):
    r = step(registration, None, Update.message("/cancel"), 10.0)
    assert r.dialog is None
    assert texts(r) == ["Регистрация отменена."]
    assert r.touched is False


def test_back_button_payload_acts_as_the_command(registration):
    d = Talk(registration)
    d.send("/start")
    d.send("Иван")
    r = d.send(Update.button("back"))
    assert d.state == "ask_name"
    assert r.outcome == "command:back"


def test_every_result_says_why(registration):
    d = Talk(registration)
    for update in ("/start", "x", "Иван", "не телефон", "/help", "назад", "/cancel"):
        r = d.send(update)
        assert r.reason and r.reason.endswith(".")
        assert r.outcome
