"""Parsing flow text: JSON or YAML, UTF-8 only, an object at the top, errors with line and column."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flows.errors import DocumentSyntaxError, FlowFormatError
from flows.limits import MAX_EXPANDED_YAML
from flows.load import load, load_text, parse_text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "registration.json"


def details_of(doc: Any) -> list[dict[str, str]]:
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    return caught.value.details


def test_json_and_yaml_forms_load_to_equal_models() -> None:
    raw = EXAMPLE.read_text(encoding="utf-8")
    yaml_text = """
format: botflow/v1
id: registration
title: Регистрация
start: ask_name
settings:
  session_ttl: 1800
  reminder: {after: 900, text: Вы хотели завершить регистрацию. Продолжим?}
  fallback: Не понял. Повторите, пожалуйста.
commands:
  cancel: {match: [/cancel, отмена], reply: Регистрация отменена.}
  restart: {match: [/start]}
  back: {match: [/back, назад, back]}
  help:
    match: [/help]
    reply: Отвечайте на вопросы по одному. /cancel — отменить, назад — вернуться на шаг.
states:
  - id: ask_name
    title: Имя
    say: [{text: Привет! Как вас зовут?}]
    input: {type: text, save_as: name, min_length: 2, max_length: 80, error: Имя 2-80 символов. Повторите.}
  - id: ask_phone
    title: Телефон
    say: [{text: Введите телефон в формате +7XXXXXXXXXX}]
    input: {type: phone, save_as: phone, error: Невалидный телефон. Повторите.}
  - id: ask_email
    title: Email
    say: [{text: Введите email}]
    input: {type: email, save_as: email, error: Невалидный email. Повторите.}
  - id: ask_pdn
    title: Согласие на обработку ПДн
    say:
      - text: Согласны на обработку персональных данных? (да/нет)
        buttons: [[{text: Да, payload: "yes"}, {text: Нет, payload: "no"}]]
  - {id: confirmed, title: Готово, final: true, say: [{text: "Готово! Имя: {name}, телефон: {phone}"}]}
  - {id: refused, title: Отказ, final: true, say: [{text: Без согласия не можем продолжить.}]}
transitions:
  - {id: name_ok, from: ask_name, to: ask_phone, on: input}
  - {id: phone_ok, from: ask_phone, to: ask_email, on: input}
  - {id: email_ok, from: ask_email, to: ask_pdn, on: input}
  - {id: pdn_yes_button, from: ask_pdn, to: confirmed, on: button, payload: yes, set: {pdn_accepted: yes}}
  - {id: pdn_yes_text, from: ask_pdn, to: confirmed, on: text, match: [да, yes], set: {pdn_accepted: yes}}
  - {id: pdn_no, from: ask_pdn, to: refused, on: else}
layout:
  ask_name: {x: 0, y: 42}
  ask_phone: {x: 0, y: 198}
  ask_email: {x: 0, y: 354}
  ask_pdn: {x: 0, y: 522}
  confirmed: {x: 160, y: 686}
  refused: {x: -160, y: 686}
"""
    from_json = load_text(raw)
    from_yaml = load_text(yaml_text)
    assert from_yaml == from_json
    assert load_text(yaml_text.encode("utf-8"), "yaml") == load_text(raw.encode("utf-8"), "json") == from_json


def test_yaml_reads_scalars_like_json() -> None:
    data = parse_text("on: yes\nno: off\nwhen: 2024-05-01\nflag: true\nnone: null\nn: 1.5\n")
    assert data == {"on": "yes", "no": "off", "when": "2024-05-01", "flag": True, "none": None, "n": 1.5}


def test_yaml_non_string_keys_are_reported() -> None:
    doc = parse_text("format: botflow/v1\nid: a\nstates: []\nlayout:\n  1: {x: 0, y: 0}\n")
    assert [d["path"] for d in details_of(doc)] == ["layout[1]"]


@pytest.mark.parametrize("text", [b"\xff\xfe{}", b'{"id": "caf\xe9"}'])
def test_invalid_utf8_is_a_syntax_error(text: bytes) -> None:
    with pytest.raises(DocumentSyntaxError) as caught:
        parse_text(text)
    assert "UTF-8" in caught.value.message


def test_utf8_bom_is_accepted() -> None:
    assert parse_text('\ufeff{"a": "б"}'.encode("utf-8")) == {"a": "б"}


@pytest.mark.parametrize("text", ["[1, 2]", "42", '"text"', "", "- a\n- b\n", "null"])
def test_non_object_top_level_is_a_syntax_error(text: str) -> None:
    with pytest.raises(DocumentSyntaxError) as caught:
        parse_text(text)
    assert "object" in caught.value.message


@pytest.mark.parametrize("raw", [[], "text", None, 3])
def test_load_of_a_non_object_is_a_syntax_error(raw: Any) -> None:
    with pytest.raises(DocumentSyntaxError):
        load(raw)


@pytest.mark.parametrize(("text", "fmt", "where"), [
    ('{\n  "format": "botflow/v1",\n  "id": \n}', "json", "line 4, column 1"),
    # YAML rejects this too; text that looks like JSON gets the JSON error
    ('{\n  "format": "botflow/v1"\n  "id": "a"\n}', None, "line 3, column 3"),
    ("format: botflow/v1\nid: [a, b\nstates: []\n", None, "line 3"),
    ("format: botflow/v1\n  id: x\n", "yaml", "line 2, column 5"),
])
def test_syntax_errors_name_line_and_column(text: str, fmt: str | None, where: str) -> None:
    with pytest.raises(DocumentSyntaxError) as caught:
        parse_text(text, fmt)
    assert where in caught.value.message, caught.value.message
    assert ("JSON" if text.startswith("{") else "YAML") in caught.value.message


def test_fmt_json_does_not_fall_back_to_yaml() -> None:
    with pytest.raises(DocumentSyntaxError):
        parse_text("format: botflow/v1\n", "json")


def test_yaml_aliases_load_as_values_of_their_own() -> None:
    text = ("format: botflow/v1\nid: a\nyes_no: &yn [[{text: Да, payload: yes}]]\n"
            "states:\n  - {id: a, buttons: *yn}\n  - {<<: {id: b, final: true}, buttons: *yn}\n")
    doc = parse_text(text, "yaml")
    assert doc["states"][0]["buttons"] == doc["states"][1]["buttons"] == [[{"text": "Да", "payload": "yes"}]]
    assert doc["states"][1]["id"] == "b" and doc["states"][1]["final"] is True
    # written out: a change in one place (as the editor makes) leaves the others alone
    doc["states"][0]["buttons"][0][0]["text"] = "Нет"
    assert doc["yes_no"][0][0]["text"] == doc["states"][1]["buttons"][0][0]["text"] == "Да"


def test_yaml_aliases_that_multiply_the_document_are_refused_at_once() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]" for p, n in zip("abcdefghi", "bcdefghij")]
    with pytest.raises(DocumentSyntaxError) as caught:  # 10^10 values written out: counted, never made
        parse_text("\n".join(levels) + "\n", "yaml")
    assert "aliases" in caught.value.message and f"{MAX_EXPANDED_YAML:,}" in caught.value.message


def test_a_yaml_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(DocumentSyntaxError) as caught:
        parse_text("format: botflow/v1\nid: a\nstates: &s [{id: a}, *s]\n", "yaml")
    assert "repeat forever" in caught.value.message


def test_json_nan_is_reported_by_path() -> None:
    doc = parse_text('{"format": "botflow/v1", "id": "a", "states": [], "settings": {"session_ttl": NaN}}')
    assert [d["path"] for d in details_of(doc)] == ["settings.session_ttl"]


def test_lone_surrogates_are_reported() -> None:
    doc = parse_text('{"format": "botflow/v1", "id": "a", "title": "\\ud800", "states": []}')
    assert [d["path"] for d in details_of(doc)] == ["title"]


def test_the_text_rule_reads_a_clean_document_at_once_and_still_names_the_bad_place() -> None:
    from flows.text_rule import unclean_at

    assert unclean_at({"states": [{"say": [{"text": "Привет"}]}], 1: "a number key"}) is None
    assert unclean_at({"text": "\\u0000 written out, not a NUL"}) is None  # looks like an escape: walked, clean
    assert unclean_at({"states": [{"say": [{"text": "a\x00b"}]}]}) == ".states[0].say[0].text"
    assert unclean_at({"states": [{"title": "\ud800"}]}) == ".states[0].title"
    assert unclean_at({"big": 10 ** 5000, "bad": "\x00"}) == ".bad"  # JSON cannot write it: walked
