"""Global commands, opening a dialog, `start_on` and `bot_started`."""
from __future__ import annotations

from engine_strategies import Talk, flow_of, texts
from flows.engine import step
from flows.dialog import Update

ASK = {"id": "ask", "say": [{"text": "Как вас зовут?"}], "input": {"type": "text", "save_as": "name"}}
NEXT = {"id": "next", "say": [{"text": "Спасибо, {name}"}], "input": {"type": "any", "save_as": "note"}}
NAME_OK = {"id": "name_ok", "from": "ask", "to": "next", "on": "input"}


def two_steps(**top):
    return flow_of([ASK, NEXT], [NAME_OK], **top)


def test_defaults_cancel_and_restart():
    flow = two_steps()
    d = Talk(flow)
    d.send("hi")
    d.send("Иван")
    r = d.send("/CANCEL")
    assert texts(r) == ["Диалог отменён."]
    assert r.dialog is None
    d.send("hi")
    d.send("Иван")
    r = d.send("/start")
    assert d.state == "ask"
    assert texts(r) == ["Как вас зовут?"]


def test_back_and_help_are_off_unless_given():
    flow = two_steps()
    d = Talk(flow)
    d.send("hi")
    d.send("Иван")
    r = d.send("/back")
    # not a command: taken as the `any` input of `next`
    assert d.data["note"] == "/back"
    assert r.outcome == "fallback"


def test_commands_without_match_never_match():
    flow = two_steps(commands={"back": {"reply": "Назад"}, "help": {"reply": "Помощь"}})
    d = Talk(flow)
    d.send("hi")
    r = d.send("back")
    assert d.data["name"] == "back"
    assert r.transition == "name_ok"


def test_disabled_command_is_plain_text():
    flow = two_steps(commands={"cancel": None})
    d = Talk(flow)
    d.send("hi")
    d.send("/cancel")
    assert d.data["name"] == "/cancel"
    assert d.state == "next"


def test_commands_match_exactly():
    flow = two_steps()
    d = Talk(flow)
    d.send("hi")
    r = d.send("/start promo")
    assert r.transition == "name_ok"
    assert d.data["name"] == "/start promo"


def test_command_defaults_apply_field_by_field():
    flow = two_steps(commands={"cancel": {"reply": "Пока"}, "restart": {"match": ["заново"]}})
    d = Talk(flow)
    d.send("hi")
    r = d.send("/cancel")
    assert texts(r) == ["Пока"]
    d.send("hi")
    d.send("Иван")
    r = d.send("Заново")
    assert d.state == "ask"
    r = d.send("/start")
    assert d.state == "next"  # /start no longer restarts: it was typed as the name


def test_restart_and_back_replies_come_first_and_render_against_old_data():
    flow = two_steps(commands={"restart": {"match": ["/start"], "reply": "Заново, {name}"},
                               "back": {"match": ["назад"], "reply": "Шаг назад, {name}"},
                               "cancel": {"match": ["/cancel"], "reply": "Пока, {name}"}})
    d = Talk(flow)
    d.send("hi")
    d.send("Иван")
    r = d.send("назад")
    assert texts(r) == ["Шаг назад, Иван", "Как вас зовут?"]
    assert d.state == "ask"
    d.send("Пётр")
    r = d.send("/start")
    assert texts(r) == ["Заново, Пётр", "Как вас зовут?"]
    assert d.data == {}
    d.send("Анна")
    r = d.send("/cancel")
    assert texts(r) == ["Пока, Анна"]


def test_help_with_no_dialog_replies_and_opens_nothing():
    flow = two_steps(commands={"help": {"match": ["/help"], "reply": "Справка"}})
    r = step(flow, None, Update.message("/help"), 5.0)
    assert texts(r) == ["Справка"]
    assert r.dialog is None
    assert r.touched is False


def test_restart_and_back_open_a_dialog_when_there_is_none():
    flow = two_steps(commands={"back": {"match": ["назад"], "reply": "Назад"}})
    r = step(flow, None, Update.message("/start"), 5.0)
    assert r.dialog.state == "ask"
    r = step(flow, None, Update.message("назад"), 5.0)
    assert r.dialog.state == "ask"
    assert texts(r) == ["Назад", "Как вас зовут?"]


def test_back_with_no_dialog_under_start_on_command_gets_fallback():
    flow = two_steps(settings={"start_on": "command", "fallback": "Наберите /start"},
                     commands={"back": {"match": ["назад"]}})
    r = step(flow, None, Update.message("назад"), 5.0)
    assert r.dialog is None
    assert texts(r) == ["Наберите /start"]


def test_start_on_command_needs_the_restart_command():
    flow = two_steps(settings={"start_on": "command", "fallback": "Наберите /start"})
    r = step(flow, None, Update.message("привет"), 5.0)
    assert r.dialog is None
    assert texts(r) == ["Наберите /start"]
    assert r.outcome == "fallback"
    r = step(flow, None, Update.button("x"), 5.0)
    assert r.dialog is None
    r = step(flow, None, Update.message("/start"), 5.0)
    assert r.dialog.state == "ask"
    r = step(flow, None, Update.started(), 5.0)
    assert r.dialog.state == "ask"


def test_start_on_command_with_restart_disabled_opens_only_on_bot_started():
    flow = two_steps(settings={"start_on": "command"}, commands={"restart": None})
    assert step(flow, None, Update.message("/start"), 5.0).dialog is None
    assert step(flow, None, Update.started("x"), 5.0).dialog.state == "ask"


def test_start_on_any_opens_on_a_button_press():
    r = step(two_steps(), None, Update.button("whatever"), 5.0)
    assert r.dialog.state == "ask"
    assert r.outcome == "opened"


def test_events_never_open_a_dialog():
    r = step(two_steps(), None, Update.event("paid", {"amount": 5}), 5.0)
    assert r.dialog is None
    assert r.replies == []
    assert r.outcome == "ignored"


def test_bot_started_stores_its_payload():
    flow = two_steps()
    r = step(flow, None, Update.started("promo42"), 5.0)
    assert r.dialog.data == {"start_payload": "promo42"}
    assert r.outcome == "opened"
    for empty in (None, ""):
        r = step(flow, None, Update("bot_started", start_payload=empty), 5.0)
        assert "start_payload" not in r.dialog.data


def test_bot_started_during_a_dialog_restarts_even_without_restart_command():
    flow = two_steps(commands={"restart": None})
    d = Talk(flow)
    d.send("hi")
    d.send("Иван")
    r = d.send(Update.started("ref"))
    assert d.state == "ask"
    assert d.data == {"start_payload": "ref"}
    assert texts(r) == ["Как вас зовут?"]


def test_bot_started_during_a_dialog_sends_the_restart_reply_first():
    flow = two_steps(commands={"restart": {"reply": "Начнём сначала"}})
    d = Talk(flow)
    d.send("hi")
    d.send("Иван")
    r = d.send(Update.started())
    assert texts(r) == ["Начнём сначала", "Как вас зовут?"]
    assert d.data == {}


def test_restart_moves_the_dialog_to_the_version_the_bot_serves_now():
    old = two_steps(id="reg")
    old.version = 1
    new = flow_of([{"id": "hello", "say": [{"text": "Версия 2"}], "input": {"type": "text"}}], id="reg")
    new.version = 2
    d = Talk(old, latest=new)
    r = step(old, None, Update.message("hi"), 1.0)  # opened on the old version before publishing
    d.dialog = r.dialog
    assert d.dialog.version == 1
    d.send("Иван")
    assert d.state == "next" and d.dialog.version == 1
    r = d.send("/start")
    assert d.dialog.version == 2
    assert d.state == "hello"
    assert texts(r) == ["Версия 2"]
    d.send(Update.started())
    assert d.dialog.version == 2


def test_new_dialogs_open_on_latest():
    old = two_steps(id="reg")
    old.version = 3
    new = two_steps(id="reg")
    new.version = 4
    r = step(old, None, Update.message("hi"), 1.0, latest=new)
    assert (r.dialog.flow, r.dialog.version) == ("reg", 4)


def test_back_pops_history_and_keeps_set_values():
    flow = flow_of(
        [{"id": "a", "say": [{"text": "A"}]}, {"id": "b", "say": [{"text": "B"}]},
         {"id": "c", "say": [{"text": "C"}]}],
        [{"from": "a", "to": "b", "on": "text", "match": ["go"], "set": {"k": "1"}},
         {"from": "b", "to": "c", "on": "text", "match": ["go"], "set": {"k": "2"}},
         {"from": "c", "to": "c", "on": "text", "match": ["stay"]}],
        commands={"back": {"match": ["back"]}})
    d = Talk(flow)
    d.send("hi")
    d.send("go")
    d.send("go")
    d.send("stay")
    assert d.dialog.history == ["a", "b"]  # a self-loop does not push
    r = d.send("back")
    assert d.state == "b"
    assert texts(r) == ["B"]
    assert d.data == {"k": "2"}
    d.send("back")
    assert d.state == "a"
    r = d.send("back")
    assert d.state == "a"
    assert texts(r) == ["A"]


def test_back_resets_attempts_and_the_state_clock():
    flow = flow_of(
        [{"id": "a", "say": [{"text": "A"}]},
         {"id": "b", "say": [{"text": "B"}], "input": {"type": "integer", "error": "Число!"}}],
        [{"from": "a", "to": "b", "on": "text", "match": ["go"]}],
        commands={"back": {"match": ["back"]}})
    d = Talk(flow)
    d.send("hi")
    d.send("go")
    d.send("x")
    assert d.dialog.attempts == 1
    d.send("back", wait=7)
    assert d.dialog.attempts == 0
    assert d.dialog.entered_at == d.now
