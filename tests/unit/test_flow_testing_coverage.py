"""Coverage beyond transitions: invalid input, max_attempts → invalid, the reminder, timeouts, commands and
buttons are each counted, and what no test touched is listed."""
from __future__ import annotations

import json
from pathlib import Path

from flows.load import load
from flows.testing.cases import parse_cases
from flows.testing.coverage import points
from flows.testing.generate import generate
from flows.testing.runner import run_cases

ROOT = Path(__file__).resolve().parents[2]


def registration():
    return load(json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8")))


def doc(states, transitions, **top):
    return load({"format": "botflow/v1", "id": "t", "title": "T", "start": states[0]["id"], "states": states,
                 "transitions": transitions, **top})


def missing(report: dict) -> set[str]:
    return {m["key"] for m in report["coverage"]["points"]["missing"]}


def test_every_kind_of_point_is_listed_with_titles() -> None:
    flow = doc([
        {"id": "ask", "title": "Возраст", "say": [{"text": "Age?"}],
         "input": {"type": "integer", "save_as": "age", "max_attempts": 2, "error": "A number"}},
        {"id": "menu", "title": "Меню", "say": [{"text": "Pick", "buttons": [[{"text": "Да", "payload": "yes"},
                                                                               {"text": "Сайт", "url": "https://e.x"}]]}]},
        {"id": "end", "final": True, "say": [{"text": "Bye"}]},
    ], [
        {"id": "ok", "from": "ask", "to": "menu", "on": "input"},
        {"id": "gave_up", "from": "ask", "to": "end", "on": "invalid"},
        {"id": "slow", "from": "menu", "to": "end", "on": "timeout", "after": 60},
    ], settings={"reminder": {"after": 30, "text": "Still there?"}},
        commands={"cancel": {"match": ["/cancel"], "reply": "Cancelled"}, "help": None})
    by_key = {p["key"]: p for p in points(flow)}
    assert set(by_key) == {"transition:ok", "transition:gave_up", "transition:slow", "invalid:ask",
                           "button:menu:yes", "reminder", "command:cancel", "command:restart"}
    assert by_key["transition:gave_up"]["kind"] == "attempts"
    assert by_key["transition:slow"]["kind"] == "timeout"
    assert by_key["transition:ok"]["state_title"] == "Возраст" and by_key["transition:ok"]["target_title"] == "Меню"
    assert by_key["button:menu:yes"]["text"] == "Да" and by_key["button:menu:yes"]["state_title"] == "Меню"
    assert by_key["command:cancel"]["match"] == "/cancel"


def test_a_run_counts_invalid_input_the_reminder_commands_and_buttons() -> None:
    flow = registration()
    happy = {"name": "happy", "steps": [
        {"update": {"text": "/start"}}, {"update": {"text": "Иван"}}, {"update": {"text": "+79123456789"}},
        {"update": {"text": "ivan@example.com"}}, {"update": {"payload": "yes"}}]}
    report = run_cases(flow, parse_cases([happy]))
    assert {"invalid:ask_name", "reminder", "command:help", "command:cancel", "button:ask_pdn:no"} <= missing(report)
    assert "button:ask_pdn:yes" not in missing(report) and "command:restart" not in missing(report)
    side = {"name": "side", "steps": [
        {"update": {"text": "/start"}}, {"update": {"text": "x"}}, {"update": {"text": "/help"}},
        {"update": {"idle": 900}}, {"update": {"text": "/cancel"}}]}
    report = run_cases(flow, parse_cases([happy, side]))
    gone = {"invalid:ask_name", "reminder", "command:help", "command:cancel"}
    assert not gone & missing(report)
    points_ = report["coverage"]["points"]
    assert points_["covered"] == points_["total"] - len(points_["missing"])
    assert points_["percent"] == round(100 * points_["covered"] / points_["total"], 1)


def test_generated_tests_touch_every_point_they_can_and_say_why_not() -> None:
    flow = doc([
        {"id": "ask", "title": "Имя", "say": [{"text": "Name?"}], "input": {"type": "any", "save_as": "name"}},
        {"id": "menu", "title": "Меню", "say": [{"text": "Pick", "buttons": [[{"text": "Да", "payload": "yes"},
                                                                               {"text": "Нет", "payload": "no"}]]}],
         "input": {"type": "integer", "save_as": "n", "max_attempts": 2}},
        {"id": "end", "final": True, "say": [{"text": "Bye"}]},
    ], [
        {"id": "named", "from": "ask", "to": "menu", "on": "input"},
        {"id": "yes", "from": "menu", "to": "end", "on": "button", "payload": "yes"},
        {"id": "gave_up", "from": "menu", "to": "end", "on": "invalid"},
    ], commands={"help": {"match": ["/help"], "reply": "Answer"}})
    generated = generate(flow)
    left = {m["key"]: m["reason"] for m in generated["coverage"]["points"]["missing"]}
    # Any message is a valid answer of type any, so that state's invalid input cannot be covered.
    assert set(left) == {"invalid:ask"} and "every message is valid" in left["invalid:ask"]
    report = run_cases(flow, parse_cases(generated["tests"]))
    assert report["failed"] == 0 and missing(report) == {"invalid:ask"}
