"""Evaluation steps 3–6 and firing a transition: triggers, input, else, fallback, set, history, actions."""
from __future__ import annotations

from engine_strategies import Talk, flow_of, texts
from flows.engine import step
from flows.model import HISTORY_LIMIT
from flows.dialog import Dialog, Update

MENU = {"id": "menu", "say": [{"text": "Меню", "buttons": [[{"text": "Оплатить", "payload": "pay"}]]}]}
DONE = {"id": "done", "final": True, "say": [{"text": "Конец"}]}
OTHER = {"id": "other", "say": [{"text": "Другое"}]}


def opened(flow, now: float = 100.0) -> Talk:
    d = Talk(flow, now=now)
    d.send("hi")
    return d


def test_text_trigger_trimmed_case_insensitive():
    flow = flow_of([MENU, OTHER], [{"id": "t", "from": "menu", "to": "other", "on": "text", "match": ["Дальше"]}])
    d = opened(flow)
    r = d.send("  дальше ")
    assert r.transition == "t"
    assert texts(r) == ["Другое"]


def test_text_pattern_is_searched_case_sensitively():
    flow = flow_of([MENU, OTHER], [{"id": "t", "from": "menu", "to": "other", "on": "text", "pattern": "[0-9]{3}"}])
    d = opened(flow)
    assert d.send("код 123 ок").transition == "t"
    flow = flow_of([MENU, OTHER], [{"id": "t", "from": "menu", "to": "other", "on": "text", "pattern": "^Да$"}])
    d = opened(flow)
    assert d.send("да").transition is None
    assert d.send("Да").transition == "t"


def test_button_trigger_and_its_condition():
    flow = flow_of([MENU, OTHER, DONE], [
        {"id": "vip", "from": "menu", "to": "done", "on": "button", "payload": "pay",
         "if": [{"var": "vip", "op": "set"}]},
        {"id": "plain", "from": "menu", "to": "other", "on": "button", "payload": "pay"},
    ])
    d = opened(flow)
    r = d.send(Update.button("pay"))
    assert r.transition == "plain"


def test_first_match_in_document_order_wins():
    flow = flow_of([MENU, OTHER, DONE], [
        {"id": "first", "from": "menu", "to": "other", "on": "text", "match": ["go"]},
        {"id": "second", "from": "menu", "to": "done", "on": "text", "pattern": "go"},
    ])
    assert opened(flow).send("go").transition == "first"


def test_attachment_trigger_by_kind():
    flow = flow_of([MENU, OTHER, DONE], [
        {"id": "pic", "from": "menu", "to": "other", "on": "attachment", "kinds": ["image"]},
        {"id": "anyatt", "from": "menu", "to": "done", "on": "attachment"},
    ])
    d = opened(flow)
    assert d.send(Update.message(None, [{"type": "file"}, {"type": "image"}])).transition == "pic"
    d = opened(flow)
    assert d.send(Update.message("caption", [{"type": "audio"}])).transition == "anyatt"


def test_triggers_win_over_input():
    flow = flow_of([{"id": "ask", "say": [{"text": "Число?"}], "input": {"type": "integer", "save_as": "n"}}, OTHER],
                   [{"id": "skip", "from": "ask", "to": "other", "on": "text", "match": ["пропустить"]},
                    {"id": "ok", "from": "ask", "to": "other", "on": "input"}])
    d = opened(flow)
    r = d.send("Пропустить")
    assert r.transition == "skip"
    assert "n" not in d.data


def test_own_button_press_counts_as_typed_input():
    flow = flow_of([{"id": "size", "say": [{"text": "Размер?", "buttons": [[{"text": "S", "payload": "small"},
                                                                              {"text": "L", "payload": "large"}]]}],
                     "input": {"type": "choice", "choices": ["Small", "Large"], "save_as": "size"}}, OTHER],
                   [{"id": "ok", "from": "size", "to": "other", "on": "input"}])
    d = opened(flow)
    r = d.send(Update.button("large"))
    assert r.transition == "ok"
    assert d.data["size"] == "Large"


def test_reminder_buttons_act_like_the_states_own():
    flow = flow_of([{"id": "ask", "say": [{"text": "Да или нет?"}],
                     "input": {"type": "choice", "choices": ["да", "нет"], "save_as": "answer"}}, OTHER],
                   [{"id": "ok", "from": "ask", "to": "other", "on": "input"}],
                   settings={"reminder": {"after": 60, "text": "Ну?", "buttons": [[{"text": "Да", "payload": "да"}]]}})
    d = opened(flow)
    r = d.send(Update.button("да"))
    assert r.transition == "ok"
    assert d.data["answer"] == "да"


def test_stale_press_is_not_input_and_not_an_attempt():
    flow = flow_of([{"id": "ask", "say": [{"text": "Число?"}],
                     "input": {"type": "any", "save_as": "v", "max_attempts": 1}}, OTHER],
                   [{"id": "ok", "from": "ask", "to": "other", "on": "input"},
                    {"id": "bad", "from": "ask", "to": "other", "on": "invalid"}])
    d = opened(flow)
    r = d.send(Update.button("old"))
    assert r.outcome == "fallback"
    assert texts(r) == ["Не понял. Повторите, пожалуйста.", "Число?"]
    assert d.state == "ask" and "v" not in d.data and d.dialog.attempts == 0


def test_valid_value_without_a_holding_input_transition_is_kept():
    flow = flow_of([{"id": "age", "say": [{"text": "Возраст?"}], "input": {"type": "integer", "save_as": "age"}},
                    OTHER],
                   [{"id": "adult", "from": "age", "to": "other", "on": "input",
                     "if": [{"var": "age", "op": "ge", "value": 18}]}],
                   settings={"fallback": "Нет, {age}"})
    d = opened(flow)
    r = d.send("12")
    assert d.state == "age"
    assert d.data["age"] == 12
    assert texts(r) == ["Нет, 12", "Возраст?"]
    assert r.outcome == "fallback"
    assert d.send("18").transition == "adult"


def test_invalid_without_error_sends_fallback_only():
    flow = flow_of([{"id": "n", "say": [{"text": "Число?"}], "input": {"type": "number"}}])
    d = opened(flow)
    r = d.send("abc")
    assert texts(r) == ["Не понял. Повторите, пожалуйста."]
    assert r.outcome == "input_invalid"


def test_wrong_kind_is_invalid():
    flow = flow_of([{"id": "pic", "say": [{"text": "Фото?"}],
                     "input": {"type": "attachment", "kinds": ["image"], "error": "Нужно фото"}}])
    d = opened(flow)
    assert texts(d.send("вот")) == ["Нужно фото"]
    assert texts(d.send(Update.message(None, [{"type": "file"}]))) == ["Нужно фото"]


def invalid_flow(cond=None, with_invalid=True):
    trs = [{"id": "ok", "from": "ask", "to": "other", "on": "input"}]
    if with_invalid:
        bad = {"id": "give_up", "from": "ask", "to": "done", "on": "invalid"}
        if cond:
            bad["if"] = cond
        trs.append(bad)
    return flow_of([{"id": "ask", "say": [{"text": "Число?"}],
                     "input": {"type": "integer", "save_as": "n", "error": "Ошибка", "max_attempts": 3}},
                    OTHER, DONE], trs)


def test_max_attempts_th_invalid_fires_invalid_without_the_error():
    d = opened(invalid_flow())
    assert texts(d.send("a")) == ["Ошибка"]
    assert texts(d.send("b")) == ["Ошибка"]
    r = d.send("c")
    assert r.transition == "give_up"
    assert texts(r) == ["Конец"]
    assert r.dialog is None


def test_attempts_reset_on_a_valid_value():
    flow = flow_of([{"id": "ask", "say": [{"text": "Число?"}],
                     "input": {"type": "integer", "save_as": "n", "error": "Ошибка", "max_attempts": 2}},
                    DONE],
                   [{"id": "give_up", "from": "ask", "to": "done", "on": "invalid"}])
    d = opened(flow)
    d.send("a")
    d.send("5")  # valid, no input transition: fallback, counter reset
    assert d.dialog.attempts == 0
    assert d.send("b").transition is None
    assert d.send("c").transition == "give_up"


def test_max_attempts_without_invalid_transition_keeps_counting():
    d = opened(invalid_flow(with_invalid=False))
    for n in range(1, 6):
        r = d.send("x")
        assert texts(r) == ["Ошибка"]
        assert d.dialog.attempts == n


def test_max_attempts_with_false_condition_sends_error_and_keeps_counting():
    d = opened(invalid_flow(cond=[{"var": "lenient", "op": "set"}]))
    for n in range(1, 5):
        r = d.send("x")
        assert texts(r) == ["Ошибка"] and r.transition is None
        assert d.dialog.attempts == n


def test_else_takes_messages_and_presses_but_not_events():
    flow = flow_of([MENU, OTHER], [{"id": "e", "from": "menu", "to": "other", "on": "else"}])
    assert opened(flow).send("что угодно").transition == "e"
    assert opened(flow).send(Update.button("zzz")).transition == "e"
    d = opened(flow)
    r = d.send(Update.event("paid"))
    assert r.transition is None and r.outcome == "ignored" and d.state == "menu"


def test_fallback_resends_the_state_messages_with_keyboard():
    flow = flow_of([MENU, OTHER], [{"from": "menu", "to": "other", "on": "button", "payload": "pay"}])
    d = opened(flow)
    r = d.send("хм")
    assert texts(r) == ["Не понял. Повторите, пожалуйста.", "Меню"]
    assert r.replies[1].buttons == [[{"text": "Оплатить", "payload": "pay"}]]
    assert r.outcome == "fallback" and d.state == "menu"


def test_event_merges_payload_before_the_condition():
    flow = flow_of([MENU, OTHER, DONE], [
        {"id": "paid_ok", "from": "menu", "to": "done", "on": "event", "name": "paid",
         "if": [{"var": "amount", "op": "ge", "value": 100}]},
    ])
    d = opened(flow)
    before = d.dialog.to_dict()
    r = d.send(Update.event("paid", {"amount": 50}))
    assert r.outcome == "ignored" and r.transition is None and r.replies == []
    assert r.touched is False
    assert d.dialog.to_dict() == before  # nothing changes, the idle clock included
    r = d.send(Update.event("paid", {"amount": 150}))
    assert r.transition == "paid_ok"
    assert r.completed.data["amount"] == 150


def test_event_that_is_taken_restarts_the_idle_clock():
    flow = flow_of([MENU, OTHER], [{"id": "op", "from": "menu", "to": "other", "on": "event", "name": "op"}])
    d = opened(flow)
    d.send(Update.event("op", {"who": "Анна"}), wait=30)
    assert d.dialog.updated_at == d.now
    assert d.data == {"who": "Анна"}


def test_set_renders_against_data_before_the_set():
    flow = flow_of([MENU, OTHER], [{"id": "t", "from": "menu", "to": "other", "on": "button", "payload": "pay",
                                    "set": {"a": "new", "b": "{a}", "c": "{{a}}"}}])
    d = opened(flow)
    d.dialog.data["a"] = "old"
    d.send(Update.button("pay"))
    assert d.data == {"a": "new", "b": "old", "c": "{a}"}


def test_say_renders_data_after_the_set():
    flow = flow_of([MENU, {"id": "other", "say": [{"text": "Статус: {status}"}]}],
                   [{"from": "menu", "to": "other", "on": "button", "payload": "pay", "set": {"status": "ok"}}])
    assert texts(opened(flow).send(Update.button("pay"))) == ["Статус: ok"]


def test_webhook_posts_data_after_set_and_clear_drops_data():
    flow = flow_of([MENU, OTHER], [{"id": "t", "from": "menu", "to": "other", "on": "button", "payload": "pay",
                                    "set": {"paid": "yes"},
                                    "actions": [{"type": "webhook", "url": "https://crm.example/x"},
                                                {"type": "clear"}]}])
    d = opened(flow)
    d.dialog.data["name"] = "Иван"
    r = d.send(Update.button("pay"))
    assert len(r.effects) == 1
    assert r.effects[0].type == "webhook" and r.effects[0].url == "https://crm.example/x"
    assert r.effects[0].data == {"name": "Иван", "paid": "yes"}
    assert d.data == {}


def test_final_state_sends_say_runs_actions_and_ends():
    flow = flow_of([MENU, DONE], [{"id": "fin", "from": "menu", "to": "done", "on": "button", "payload": "pay",
                                   "actions": [{"type": "webhook", "url": "https://crm.example/x"}]}])
    d = opened(flow)
    r = d.send(Update.button("pay"))
    assert r.dialog is None and r.outcome == "completed"
    assert texts(r) == ["Конец"]
    assert r.completed.state == "done"
    assert [e.url for e in r.effects] == ["https://crm.example/x"]
    r = d.send("снова")
    assert r.outcome == "opened"


def test_self_loop_does_not_push_history_and_state_change_resets_attempts():
    flow = flow_of([{"id": "ask", "say": [{"text": "?"}], "input": {"type": "integer", "error": "E"}}, OTHER],
                   [{"from": "ask", "to": "other", "on": "text", "match": ["go"]}])
    d = opened(flow)
    d.send("x")
    d.send("y")
    assert d.dialog.attempts == 2
    d.send("go")
    assert d.dialog.attempts == 0 and d.dialog.history == ["ask"]


def test_history_holds_at_most_fifty_entries():
    flow = flow_of([{"id": "a", "say": [{"text": "A"}]}, {"id": "b", "say": [{"text": "B"}]}],
                   [{"from": "a", "to": "b", "on": "else"}, {"from": "b", "to": "a", "on": "else"}])
    d = opened(flow)
    for _ in range(120):
        d.send("x")
    assert len(d.dialog.history) == HISTORY_LIMIT
    assert d.dialog.history[-1] == "b"  # we are at a after an even number of moves


def test_expired_session_is_no_dialog():
    flow = flow_of([MENU, OTHER], [{"from": "menu", "to": "other", "on": "else"}], settings={"session_ttl": 60})
    d = opened(flow)
    r = d.send("x", wait=61)
    assert r.outcome == "opened"  # treated as a first message, not as the else
    assert d.state == "menu"
    assert "expired" in r.reason


def test_session_in_a_missing_state_is_no_dialog():
    flow = flow_of([MENU, OTHER])
    ghost = Dialog(flow="t", version=None, state="gone", updated_at=99.0)
    r = step(flow, ghost, Update.message("hi"), 100.0)
    assert r.dialog.state == "menu"


def test_final_start_state_ends_at_once():
    flow = flow_of([{"id": "only", "final": True, "say": [{"text": "Бот закрыт"}]}])
    r = step(flow, None, Update.message("hi"), 1.0)
    assert r.dialog is None and texts(r) == ["Бот закрыт"]
    assert r.completed.state == "only"


def test_long_say_is_split_with_keyboard_on_the_last_part():
    line = "я" * 3000
    flow = flow_of([{"id": "long", "say": [{"text": f"{line}\n{line}\n{{name}}",
                                             "buttons": [[{"text": "Ок, {name}", "payload": "ok"}]]}]}])
    r = step(flow, None, Update.started(), 1.0)
    assert [len(x.text) for x in r.replies] == [3000, 3001]
    assert r.replies[0].buttons == []
    assert r.replies[1].buttons == [[{"text": "Ок, ", "payload": "ok"}]]


def test_link_buttons_keep_their_url():
    flow = flow_of([{"id": "s", "say": [{"text": "Сайт", "buttons": [[{"text": "Открыть", "url": "https://x.example"}]]}]}])
    r = step(flow, None, Update.started(), 1.0)
    assert r.replies[0].buttons == [[{"text": "Открыть", "url": "https://x.example"}]]


def test_lookups_are_rebuilt_for_a_new_flow_object_even_at_a_reused_address():
    from flows.firing import plan
    first = flow_of([{"id": "a", "say": [{"text": "Первая"}]}])
    assert texts(step(first, None, Update.started(), 1.0)) == ["Первая"]
    assert plan(first) is plan(first)
    for n in range(300):  # more flows than the cache keeps
        other = flow_of([{"id": "a", "say": [{"text": f"Flow {n}"}]}])
        assert texts(step(other, None, Update.started(), 1.0)) == [f"Flow {n}"]
    assert texts(step(first, None, Update.started(), 1.0)) == ["Первая"]
