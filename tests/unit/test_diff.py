"""Semantic diff of two documents: added, removed and changed, field by field; layout never counts."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from flows.diff import diff, is_empty
from flows.load import load_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))


@pytest.fixture()
def reg() -> dict[str, Any]:
    return load_text((ROOT / "examples" / "registration.json").read_bytes()).document


def state(doc: dict[str, Any], state_id: str) -> dict[str, Any]:
    return next(s for s in doc["states"] if s["id"] == state_id)


def transition(doc: dict[str, Any], tid: str) -> dict[str, Any]:
    return next(t for t in doc["transitions"] if t["id"] == tid)


def change(field: str, old: Any, new: Any, kind: str = "changed") -> dict[str, Any]:
    return {"field": field, "from": old, "to": new, "change": kind}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_document_against_itself_is_empty(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    result = diff(doc, copy.deepcopy(doc))
    assert is_empty(result)
    assert result["states"] == {"added": [], "removed": [], "changed": []}
    assert result["transitions"] == {"added": [], "removed": [], "changed": [], "order": None}
    assert result["settings"] == [] and result["commands"] == []
    assert result["start"] is None and result["title"] is None


def test_moving_states_around_is_no_change(reg: dict[str, Any]) -> None:
    moved = copy.deepcopy(reg)
    moved["layout"] = {sid: {"x": pos["x"] + 40, "y": pos["y"] * 2} for sid, pos in reg["layout"].items()}
    moved["layout"]["ghost"] = {"x": 1, "y": 1}
    moved["states"].reverse()  # display order only
    assert diff(reg, moved) == diff(reg, reg)
    assert is_empty(diff(reg, moved))


def test_state_fields_change_one_by_one(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    state(new, "ask_name")["input"]["type"] = "any"
    state(new, "ask_name")["input"]["max_attempts"] = 3
    del state(new, "ask_name")["input"]["min_length"]
    state(new, "ask_pdn")["say"][0]["text"] = "Согласны?"
    state(new, "ask_pdn")["say"][0]["buttons"][0][1]["payload"] = "nope"
    result = diff(reg, new)
    assert result["states"]["added"] == [] and result["states"]["removed"] == []
    assert result["states"]["changed"] == [
        {"id": "ask_name", "fields": [
            change("input.max_attempts", None, 3, "added"),
            change("input.min_length", 2, None, "removed"),
            change("input.type", "text", "any"),
        ]},
        {"id": "ask_pdn", "fields": [
            change("say[0].buttons[0][1].payload", "no", "nope"),
            change("say[0].text", "Согласны на обработку персональных данных? (да/нет)", "Согласны?"),
        ]},
    ]
    assert not is_empty(result)


def test_states_added_and_removed_in_document_order(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    new["states"] = [s for s in new["states"] if s["id"] != "ask_email"]
    new["states"].append({"id": "ask_city", "input": {"type": "text", "save_as": "city"}})
    new["states"].append({"id": "ask_age", "input": {"type": "integer", "save_as": "age"}})
    result = diff(reg, new)
    assert result["states"]["added"] == ["ask_city", "ask_age"]
    assert result["states"]["removed"] == ["ask_email"]
    assert result["states"]["changed"] == []


def test_a_whole_new_field_is_listed_field_by_field(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    state(new, "ask_pdn")["input"] = {"type": "choice", "choices": ["да", "нет"], "save_as": "pdn"}
    fields = diff(reg, new)["states"]["changed"][0]["fields"]
    assert fields == [change("input.choices", None, ["да", "нет"], "added"),
                      change("input.save_as", None, "pdn", "added"),
                      change("input.type", None, "choice", "added")]


def test_transitions_keyed_by_id(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    new["transitions"] = [t for t in new["transitions"] if t["id"] != "pdn_no"]
    new["transitions"].append({"id": "pdn_no_button", "from": "ask_pdn", "to": "refused", "on": "button",
                               "payload": "no"})
    transition(new, "pdn_yes_text")["match"] = ["да", "yes", "ага"]
    transition(new, "pdn_yes_button")["if"] = [{"var": "age", "op": "ge", "value": 18}]
    transition(new, "pdn_yes_button")["set"]["source"] = "button"
    transition(new, "name_ok")["to"] = "ask_email"
    result = diff(reg, new)["transitions"]
    assert result["added"] == ["pdn_no_button"]
    assert result["removed"] == ["pdn_no"]
    assert result["changed"] == [
        {"id": "name_ok", "fields": [change("to", "ask_phone", "ask_email")]},
        {"id": "pdn_yes_button", "fields": [
            change("if[0].op", None, "ge", "added"),
            change("if[0].value", None, 18, "added"),
            change("if[0].var", None, "age", "added"),
            change("set.source", None, "button", "added"),
        ]},
        {"id": "pdn_yes_text", "fields": [change("match", ["да", "yes"], ["да", "yes", "ага"])]},
    ]
    assert result["order"] is None  # the kept transitions are still in the same order


def test_transition_order_is_semantic(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    ts = new["transitions"]
    ts[3], ts[4] = ts[4], ts[3]
    result = diff(reg, new)
    assert result["transitions"]["order"] == {
        "from": ["name_ok", "phone_ok", "email_ok", "pdn_yes_button", "pdn_yes_text", "pdn_no"],
        "to": ["name_ok", "phone_ok", "email_ok", "pdn_yes_text", "pdn_yes_button", "pdn_no"],
    }
    assert result["transitions"]["changed"] == []
    assert not is_empty(result)


def test_top_level_settings_and_commands(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    new["title"] = "Регистрация 2"
    new["start"] = "ask_phone"
    new["settings"]["reminder"]["after"] = 600
    new["settings"]["start_on"] = "command"
    new["commands"]["cancel"] = None
    del new["commands"]["help"]
    new["commands"]["back"]["reply"] = "Вернулись."
    new["x-owner"] = "sales"
    result = diff(reg, new)
    assert result["title"] == {"from": "Регистрация", "to": "Регистрация 2"}
    assert result["start"] == {"from": "ask_name", "to": "ask_phone"}
    assert result["settings"] == [change("reminder.after", 900, 600), change("start_on", None, "command", "added")]
    assert result["commands"] == [
        change("back.reply", None, "Вернулись.", "added"),
        change("cancel", {"match": ["/cancel", "отмена"], "reply": "Регистрация отменена."}, None),
        change("help.match", ["/help"], None, "removed"),
        change("help.reply", reg["commands"]["help"]["reply"], None, "removed"),
    ]
    assert result["other"] == [change("x-owner", None, "sales", "added")]


def test_absent_and_null_commands_differ() -> None:
    """An absent `cancel` is the default one; a null `cancel` is disabled."""
    base = {"format": "botflow/v1", "id": "f", "title": "F", "start": "a", "states": [], "transitions": []}
    disabled = {**base, "commands": {"cancel": None}}
    assert diff(base, disabled)["commands"] == [change("cancel", None, None, "added")]
    assert diff(disabled, base)["commands"] == [change("cancel", None, None, "removed")]


def test_key_order_does_not_change_the_result(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    state(new, "ask_phone")["input"]["error"] = "Ошибка."
    transition(new, "pdn_no")["on"] = "invalid"

    def reversed_keys(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reversed_keys(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reversed_keys(v) for v in value]
        return value

    assert diff(reversed_keys(reg), reversed_keys(new)) == diff(reg, new)


def test_duplicate_ids_are_not_lost(reg: dict[str, Any]) -> None:
    new = copy.deepcopy(reg)
    new["transitions"].append(dict(transition(reg, "pdn_no"), on="invalid"))
    assert diff(reg, new)["transitions"]["added"] == ["pdn_no#2"]


def test_translations_changed_between_versions_are_listed_by_language() -> None:
    from flows.diff import diff as semantic
    old = {"format": "botflow/v1", "id": "x", "start": "a", "languages": ["ru", "en", "tt"],
           "states": [{"id": "a", "say": [{"text": "Привет"}, {"text": {"ru": "Пока", "en": "Bye"}}],
                       "input": {"type": "choice", "choices": ["Да", "Нет"]}}]}
    new = {**old, "states": [{"id": "a", "say": [{"text": {"ru": "Привет", "en": "Hi"}}, {"text": {"ru": "Пока"}}],
                              "input": {"type": "choice", "choices": {"ru": ["Да", "Нет"], "tt": ["Әйе", "Юк"]}}}]}
    result = semantic(old, new)
    assert result["states"]["changed"] == []  # the default language's texts are the same
    assert result["translations"] == [
        {"path": "states[0].say[0].text", "language": "en", "from": "", "to": "Hi", "state": "a"},
        {"path": "states[0].say[1].text", "language": "en", "from": "Bye", "to": "", "state": "a"},
        {"path": "states[0].input.choices", "language": "tt", "from": "", "to": "Әйе\nЮк", "state": "a"},
    ]
    assert semantic(new, new)["translations"] == []


def test_the_change_list_names_states_and_transitions_by_titles(reg: dict[str, Any]) -> None:
    from web.diffview import change_lines

    new = copy.deepcopy(reg)
    new["start"] = "ask_phone"
    state(new, "ask_email")["say"][0]["text"] = "Ваш email?"
    new["states"].append({"id": "untitled_state", "say": [{"text": "?"}]})
    moved = new["transitions"][0]
    moved["to"] = "ask_email"
    rows = change_lines(diff(reg, new), reg, new)
    said = {row["what"]: row for row in rows}
    assert "state «Email»" in said and said["state «Email»"]["id"] == "ask_email"
    assert "state untitled_state" in said  # no title: the id is all there is
    assert said["flow start state"]["fields"] == [{"field": "start state", "from": "«Имя»", "to": "«Телефон»"}]
    changed = said["transition «Имя» → «Email»"]
    assert changed["id"] == moved["id"]
    assert {"field": "to", "from": "«Телефон»", "to": "«Email»"} in changed["fields"]
    assert not any("ask_" in row["what"] for row in rows)
