"""Formatted messages and pictures in the flow core: load errors, the look-alike warning, escaping, replies."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from flows.canonical import content_hash
from flows.engine import step
from flows.errors import FlowFormatError
from flows.fastcheck import well_formed
from flows.load import load
from flows.markup import escape_markdown, html_problem, looks_marked_up
from flows.dialog import Update
from flows.validate import validate


def _doc(*say: dict[str, Any]) -> dict[str, Any]:
    return {"format": "botflow/v1", "id": "f", "start": "ask",
            "states": [{"id": "ask", "say": [{"text": "Имя?"}], "input": {"type": "text", "save_as": "name"}},
                       {"id": "done", "final": True, "say": list(say)}],
            "transitions": [{"from": "ask", "to": "done", "on": "input"}]}


def _details(doc: dict[str, Any]) -> list[dict[str, str]]:
    assert not well_formed(doc)  # the quick check never lets a broken document through
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    return caught.value.details


def _answer(doc: dict[str, Any], name: str) -> list[dict[str, Any]]:
    flow = load(doc)
    opened = step(flow, None, Update.message("/start"), 0)
    return [reply.to_dict() for reply in step(flow, opened.dialog, Update.message(name), 1).replies]


@pytest.mark.parametrize("text, problem", [
    ("<b>жирный", "<b> is opened but never closed"),
    ("<b>a<i>b</b></i>", "</b> closes <b> while <i> is still open"),
    ("a</i>", "</i> closes a tag that was never opened"),
    ("<div>x</div>", "<div> is not a tag MAX shows"),
    ('<b class="x">x</b>', "only <a> takes an attribute"),
    ("<br/>", "<br/> is not a tag MAX shows"),
])
def test_html_MAX_cannot_show_is_a_load_error_naming_its_path(text: str, problem: str) -> None:
    details = _details(_doc({"text": "ok"}, {"text": text, "format": "html"}))
    assert [d["path"] for d in details] == ["states[1].say[1].text"]
    assert problem in details[0]["message"]


def test_balanced_html_with_MAX_tags_loads() -> None:
    text = '<b>Привет</b>, {name}! <a href="https://example.com/?a=1&b=2">сайт</a> 2 < 3 <pre><code>x</code></pre>'
    assert html_problem(text) is None
    doc = _doc({"text": text, "format": "html"})
    assert well_formed(doc)
    assert load(doc).state("done").say[0].format == "html"


def test_the_same_tags_in_a_markdown_or_plain_text_are_no_load_error() -> None:
    load(_doc({"text": "<b>unclosed", "format": "markdown"}, {"text": "<div>"}))


@pytest.mark.parametrize("message, path, words", [
    ({"text": "x", "format": "rtf"}, "states[1].say[0].format", 'unknown format "rtf"'),
    ({"text": "x", "image": "http://example.com/a.png"}, "states[1].say[0].image", "https://"),
    ({"text": "x", "image": "ftp://example.com/a.png"}, "states[1].say[0].image", "https://"),
    ({"text": "x", "image": 5}, "states[1].say[0].image", "must be a string"),
    ({"text": "x", "upload": ""}, "states[1].say[0].upload", "must not be empty"),
    ({"text": "", "image": "https://example.com/a.png", "upload": "u1"}, "states[1].say[0].upload", "not both"),
])
def test_a_wrong_format_or_picture_is_one_detail_with_its_path(message: dict[str, Any], path: str,
                                                               words: str) -> None:
    details = _details(_doc(message))
    assert [d["path"] for d in details] == [path]
    assert words in details[0]["message"]


@pytest.mark.parametrize("text", ["**важно**", "Сайт: [тут](https://example.com)", "`код`", "~~старое~~",
                                  "# Заголовок", "> цитата", "<b>жирный</b>", "нажмите *Далее*"])
def test_a_markup_looking_text_without_format_is_the_warning(text: str) -> None:
    issues = [i for i in validate(load(_doc({"text": text}))) if i.code == "unformatted_markup"]
    assert len(issues) == 1 and issues[0].severity == "warning" and issues[0].states == ("done",)


@pytest.mark.parametrize("text", ["Цена 2 * 3 = 6", "Телефон +7 900 123-45-67", "a_b_c", "C# и F#", "1 > 0",
                                  "https://example.com/a_b"])
def test_ordinary_text_is_not_taken_for_markup(text: str) -> None:
    assert not looks_marked_up(text)
    assert not [i for i in validate(load(_doc({"text": text}))) if i.code == "unformatted_markup"]


def test_a_formatted_text_raises_no_warning() -> None:
    doc = _doc({"text": "**важно**", "format": "markdown"}, {"text": "<b>x</b>", "format": "html"})
    assert not [i for i in validate(load(doc)) if i.code == "unformatted_markup"]


def test_inserted_values_are_escaped_for_html_so_the_users_text_stays_literal() -> None:
    replies = _answer(_doc({"text": 'Привет, <b>{name}</b>! <a href="https://x.example/?q={name}">x</a>',
                            "format": "html"}), '<i>Ann</i> & "Bob"')
    assert replies == [{"text": 'Привет, <b>&lt;i&gt;Ann&lt;/i&gt; &amp; &quot;Bob&quot;</b>! '
                                '<a href="https://x.example/?q=&lt;i&gt;Ann&lt;/i&gt; &amp; &quot;Bob&quot;">x</a>',
                        "buttons": [], "format": "html"}]
    assert html_problem(replies[0]["text"]) is None


def test_inserted_values_are_escaped_for_markdown() -> None:
    replies = _answer(_doc({"text": "Вы ввели **{name}**", "format": "markdown"}), "*a* ivan_b `c` [d](e) ++f++")
    assert replies[0]["text"] == r"Вы ввели **\*a\* ivan_b \`c\` \[d\](e) \+\+f\+\+**"
    assert replies[0]["format"] == "markdown"


def test_markdown_escaping_keeps_ordinary_text_as_it_is() -> None:
    assert escape_markdown("+7 900 123-45-67, 2^3 = 8") == "+7 900 123-45-67, 2^3 = 8"
    assert escape_markdown("# hash\n> quote") == "\\# hash\n\\> quote"


def test_plain_text_keeps_values_unescaped() -> None:
    assert _answer(_doc({"text": "Привет, {name}"}), "<b>*x*</b>")[0] == {"text": "Привет, <b>*x*</b>", "buttons": []}


def test_the_reply_carries_the_picture_and_an_empty_caption() -> None:
    replies = _answer(_doc({"text": "", "image": "https://cdn.example.com/cat.png",
                            "buttons": [[{"text": "Ещё", "payload": "more"}]]},
                           {"text": "Файл", "upload": "up-1", "format": "markdown"}), "Ann")
    assert replies == [
        {"text": "", "buttons": [[{"text": "Ещё", "payload": "more"}]], "image": "https://cdn.example.com/cat.png"},
        {"text": "Файл", "buttons": [], "format": "markdown", "upload": "up-1"},
    ]


def test_a_long_formatted_text_keeps_its_format_in_every_part_and_the_picture_on_the_first() -> None:
    text = "\n".join(["*{name}*"] + ["строка " * 30] * 40)
    replies = _answer(_doc({"text": text, "format": "markdown", "image": "https://cdn.example.com/a.png"}), "Ann")
    assert len(replies) > 1
    assert all(r["format"] == "markdown" for r in replies)
    assert [("image" in r) for r in replies] == [True] + [False] * (len(replies) - 1)


def test_the_hash_covers_format_and_pictures() -> None:
    plain = _doc({"text": "**x**"})
    hashes = {content_hash(plain)}
    for change in ({"format": "markdown"}, {"image": "https://cdn.example.com/a.png"}, {"upload": "up-1"}):
        changed = copy.deepcopy(plain)
        changed["states"][1]["say"][0].update(change)
        hashes.add(content_hash(changed))
    assert len(hashes) == 4


def test_a_translation_that_reads_as_markup_is_warned_too() -> None:
    doc = _doc({"text": {"ru": "Привет", "en": "**Hi**"}})
    doc["languages"] = ["ru", "en"]
    doc["states"][0]["say"][0]["text"] = {"ru": "Имя?", "en": "Name?"}
    issues = [i for i in validate(load(doc)) if i.code == "unformatted_markup"]
    assert [i.states for i in issues] == [("done",)]
