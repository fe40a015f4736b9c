"""Document patterns run on RE2 with Python's syntax and Python's Unicode classes."""
from __future__ import annotations

import re

import pytest
from engine_strategies import Talk, flow_of
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flows.conditions import check
from flows.inputs import check as check_input
from flows.errors import FlowFormatError
from flows.load import load
from flows.model import Condition, Input
from flows.patterns import compile_pattern, pattern_problem, search

AGREE = [r"^\d{5}$", r"\w+", r"^[\w.-]+@\w+$", r"(?i)привет", r"[^\W\d]", r"[\W_]", r"\s", r"[\S]x", r"\D+",
         r"(?i:abc)d", r"a.b", r"(?s)a.b", r"a{2,}?", r"(?P<x>a)|b", r"[a-zа-яё]+", r"^$", r"x\Z", r"(?a)^\w+$",
         r"[\d\s]", r"\N{DIGIT ONE}", r"(?x) a b  # spaced", r"^(?:да|нет)$", r"[^abc]", r"\\", r"\.", r"\u0436",
         r"\bда\b", r"\bда\b|\bнет\b", r"(?i)\b[а-яё]+\b", r"\b\d+\b", r"^\bда\b$", r"(\bда|нет\b)", r"a\bb"]
TEXTS = ["12345", "привет мир", "a.b@c", "ПРИВЕТ", "aaaa!", "x_1", "٣", "a\nb", "да", "ABCd", "abcd", "ё",
         "\u3000", "", "aaa", "Ж1", "1", "ab", "x", "\\", "ж", "скажи да!", "дает", "прида", "нет да", "12 кг",
         "a b"]


@pytest.mark.parametrize("pattern", AGREE)
def test_patterns_match_what_python_re_matches(pattern: str) -> None:
    assert pattern_problem(pattern) is None
    for text in TEXTS:
        assert search(pattern, text) == (re.search(pattern, text.strip()) is not None), (pattern, text)


def test_unicode_classes_keep_their_python_meaning() -> None:
    assert search(r"^\w+$", "Привет_мир") and search(r"^\d$", "٣") and search(r"^a\sb$", "a\u00a0b")
    assert not search(r"\W", "ёжик") and search(r"^\S+$", "ёжик")


def test_patterns_are_searched_in_the_trimmed_text_case_sensitively() -> None:
    assert search(r"^abc$", "  abc \n") and search("b", "abc") and not search("B", "abc")


@pytest.mark.parametrize("pattern, words", [
    (r"(a)\1", "backreference"), (r"(?P<n>a)(?P=n)", "backreference"), (r"a(?=b)", "lookahead"),
    (r"(?<!x)y", "lookbehind"), (r"(?>a+)", "atomic"), (r"a*+", "possessive"), (r"(", "does not compile"),
    (r"a{1001}", "refused"), (r"(?(1)a|b)", "does not compile"),
])
def test_patterns_outside_the_syntax_are_refused_with_a_reason(pattern: str, words: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None and words in problem


def test_a_refused_pattern_is_a_load_error_at_its_path() -> None:
    doc = {"format": "botflow/v1", "id": "f", "start": "a",
           "states": [{"id": "a", "say": [{"text": "?"}]},
                      {"id": "b", "input": {"type": "regex", "pattern": r"(\w)\1"}}],
           "transitions": [{"from": "a", "to": "b", "on": "text", "pattern": "(?=x)"},
                           {"from": "a", "to": "b", "on": "else", "if": [{"var": "v", "op": "matches",
                                                                        "value": "(?<=a)b"}]}]}
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    paths = [d["path"] for d in caught.value.details]
    assert paths == ["states[1].input.pattern", "transitions[0].pattern", "transitions[1].if[0].value"]
    assert "backreference" in caught.value.details[0]["message"]


def test_the_classic_catastrophic_pattern_answers_at_once_on_a_long_message() -> None:
    # A backtracking engine would not finish this within the age of the universe (bench/patterns.py times it).
    text = "a" * 3999 + "!"
    assert not isinstance(compile_pattern(r"^(a+)+$"), re.Pattern)
    assert not check_input(Input(type="regex", pattern=r"^(a+)+$"), text).ok
    assert not check(Condition("v", "matches", r"^(a|aa)+$"), {"v": text})
    assert check_input(Input(type="regex", pattern=r"^(a+)+$"), "a" * 4000).ok


ATOMS = st.sampled_from(["a", "b", "я", "Ж", "1", "٣", " ", ".", r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", "[ab]",
                         "[^a]", "[а-я]", r"[\w-]", r"[^\W\d]", r"[\s\d]", r"\.", "_", "-", r"\u00a0"])
SUFFIXES = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "*?", "+?"])


@st.composite
def small_patterns(draw: st.DrawFn, depth: int = 0) -> str:
    """Short patterns over atoms, groups, alternation, repeats and anchors."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 2 and draw(st.integers(0, 5)) == 0:
            inner = draw(small_patterns(depth + 1))
            other = draw(small_patterns(depth + 1))
            atom = draw(st.sampled_from([f"({inner})", f"(?:{inner}|{other})", f"(?i:{inner})"]))
        else:
            atom = draw(ATOMS)
        parts.append(atom + draw(SUFFIXES))
    body = "".join(parts)
    if depth == 0:
        body = draw(st.sampled_from(["", "^", "(?i)", "(?s)"])) + body + draw(st.sampled_from(["", "$", r"\Z"]))
    return body


@settings(max_examples=400, deadline=None)
@given(small_patterns(), st.lists(st.text(alphabet="abяЖжA1٣ _-.\u00a0\n", max_size=8), min_size=1, max_size=4))
def test_any_small_pattern_matches_what_python_matches(pattern: str, samples: list[str]) -> None:
    # The oracle is Python's backtracking engine: with many nested repeats it can take hours on eight
    # characters (a run once hung here), while ours stays linear. Five repeats keep the oracle quick.
    assume(len(re.findall(r"(?<!\\)[*+{]", pattern)) <= 5)
    assert pattern_problem(pattern) is None, pattern
    for text in samples:
        assert search(pattern, text) == (re.search(pattern, text.strip()) is not None), (pattern, text)


def test_a_text_trigger_pattern_is_searched_by_the_engine_in_linear_time() -> None:
    flow = flow_of([{"id": "menu", "say": [{"text": "?"}]}, {"id": "done", "final": True, "say": [{"text": "ok"}]}],
                   [{"from": "menu", "to": "done", "on": "text", "pattern": r"^(a+)+$"},
                    {"from": "menu", "to": "done", "on": "text", "pattern": r"\bда\b"}])
    d = Talk(flow)
    d.send("hi")
    assert d.send("a" * 3999 + "!").outcome == "fallback"
    assert d.send("  ну да  ").outcome == "completed"
