"""Generated test names and failing steps read with state titles and button texts, not ids and payloads."""
from __future__ import annotations

import json
from pathlib import Path

from flows.load import load
from flows.testing.cases import parse_cases
from flows.testing.generate import generate
from flows.testing.runner import run_cases

ROOT = Path(__file__).resolve().parents[2]


def registration():
    return load(json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8")))


def test_generated_names_use_state_titles_and_button_texts() -> None:
    names = [t["name"] for t in generate(registration())["tests"]]
    assert "1: Имя → Готово (Телефон, Email, Согласие на обработку ПДн, «Да»)" in names
    assert any(n.endswith("(/help)") for n in names) and any("✗ Имя" in n for n in names)
    ids = ("ask_name", "ask_phone", "pdn_yes_button", "name_ok", "confirmed", "[yes]")
    assert not [n for n in names if any(i in n for i in ids)]


def test_a_failing_press_is_shown_by_its_button_text() -> None:
    case = {"name": "press", "steps": [
        {"update": {"text": "/start"}}, {"update": {"text": "Иван"}}, {"update": {"text": "+79123456789"}},
        {"update": {"text": "ivan@example.com"}}, {"update": {"payload": "yes"}, "expect": {"state": "ask_name"}}]}
    failure = run_cases(registration(), parse_cases([case]))["results"][0]["failure"]
    assert failure["button"] == "Да" and failure["shown"] == "press «Да»"
    # A payload the state has no button for is shown as sent.
    case["steps"][4]["update"] = {"payload": "maybe"}
    failure = run_cases(registration(), parse_cases([case]))["results"][0]["failure"]
    assert failure["button"] is None and failure["shown"] == "press [maybe]"


def test_why_a_point_is_not_covered_names_states_by_their_titles() -> None:
    flow = load({"format": "botflow/v1", "id": "t", "title": "T", "start": "ask", "states": [
        {"id": "ask", "title": "Вопрос", "say": [{"text": "?"}], "input": {"type": "integer", "save_as": "n"}},
        {"id": "island", "title": "Остров", "say": [{"text": "Nobody comes here"}],
         "input": {"type": "integer", "save_as": "m"}},
        {"id": "end", "final": True}],
        "transitions": [{"id": "ok", "from": "ask", "to": "end", "on": "input"},
                        {"id": "away", "from": "island", "to": "end", "on": "input"}]})
    missing = {m["key"]: m["reason"] for m in generate(flow)["coverage"]["points"]["missing"]}
    assert missing["transition:away"] == "no dialog reaches Остров from the start"
    assert missing["invalid:island"] == "no dialog reaches Остров from the start"
