"""Template rendering and splitting of long texts."""
from __future__ import annotations

import pytest

from flows.templates import compile_template, placeholders, render, split_text, value_text


def test_placeholder_is_replaced():
    assert render("Привет, {name}!", {"name": "Иван"}) == "Привет, Иван!"


def test_missing_key_and_null_render_empty():
    assert render("[{a}][{b}]", {"b": None}) == "[][]"


@pytest.mark.parametrize("value,text", [(5, "5"), (5.0, "5"), (-2.0, "-2"), (2.5, "2.5"), (0.1, "0.1"),
                                        (0.00001, "0.00001"), (1.5e-7, "0.00000015"), (1e22, "10000000000000000000000"),
                                        (True, "true"), (False, "false"), (None, ""),
                                        ({"a": 1, "b": "я"}, '{"a": 1, "b": "я"}'), ([1, "x"], '[1, "x"]')])
def test_value_forms(value, text):
    assert value_text(value) == text
    assert render("{v}", {"v": value}) == text


def test_double_braces_are_literal():
    assert render("{{name}}", {"name": "x"}) == "{name}"
    assert render("{{{name}}}", {"name": "x"}) == "{x}"
    assert render("a }} b {{", {}) == "a } b {"


@pytest.mark.parametrize("text", ["{1a}", "{ name }", "{a-b}", "{}", "{", "}", "{имя}", "{a.b}"])
def test_anything_else_is_literal(text):
    assert render(text, {"1a": "X", "name": "X", "a-b": "X", "имя": "X", "a": "X", "a.b": "X"}) == text


def test_static_templates_compile_to_themselves():
    assert compile_template("Просто текст") == "Просто текст"
    assert compile_template("{{x}}") == "{x}"
    assert placeholders("{a} и {b}, {{c}}") == ["a", "b"]


def test_short_text_is_one_part():
    assert split_text("a\nb", limit=10) == ["a\nb"]
    assert split_text("x" * 10, limit=10) == ["x" * 10]


def test_long_text_is_packed_line_by_line():
    text = "\n".join(["aaaa", "bbbb", "cccc", "dd"])
    assert split_text(text, limit=9) == ["aaaa\nbbbb", "cccc\ndd"]


def test_a_line_longer_than_the_limit_is_cut():
    text = "ab\n" + "x" * 25 + "\nyy"
    parts = split_text(text, limit=10)
    assert parts == ["ab", "x" * 10, "x" * 10, "xxxxx\nyy"]
    assert all(len(p) <= 10 for p in parts)


def test_default_limit_is_4000():
    text = ("я" * 2500 + "\n") * 4
    parts = split_text(text)
    assert all(len(p) <= 4000 for p in parts)
    assert len(parts) == 4
    assert "".join(parts).replace("\n", "") == text.replace("\n", "")
