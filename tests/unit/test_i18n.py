"""The designer's translations: complete, in step with the sources, placeholders kept; language choice."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from web import i18n
from web.diffview import field_name
from web.issues import group_issues
from flows.errors import DocumentSyntaxError
from flows.load import parse_text
from web.messages import human_detail, syntax_problem, without_api_words

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "web" / "locale" / "ru" / "LC_MESSAGES"
PLACEHOLDER = re.compile(r"%\([a-z_]+\)s|\{[A-Za-z_]+\}")


def catalogue(domain: str):
    with (LOCALE / f"{domain}.po").open("rb") as fh:
        return read_po(fh, locale="ru")


def source_ids(domain: str) -> set[str]:
    """The texts the sources mark for translation, as Babel extracts them (see web/locale/README.md)."""
    if domain == "js":
        found = extract_from_dir(ROOT / "static" / "js", [("**.js", "javascript")], keywords={"t": None})
    else:
        found = list(extract_from_dir(ROOT / "web", [("**.py", "python"), ("**/templates/**.html", "jinja2")],
                                      directory_filter=lambda path: "__pycache__" not in path))
        found += extract_from_dir(ROOT / "server" / "services", [("**.py", "python")],  # refusals marked N_
                                  directory_filter=lambda path: "__pycache__" not in path)
    ids = set()
    for _file, _line, message, _comments, _context in found:
        ids.add(message[0] if isinstance(message, (tuple, list)) else message)
    return ids


@pytest.mark.parametrize("domain", ["messages", "js"])
def test_every_marked_text_has_a_russian_translation(domain: str) -> None:
    cat = catalogue(domain)
    ids = {m.id[0] if isinstance(m.id, tuple) else m.id for m in cat if m.id}
    missing = source_ids(domain) - ids
    assert not missing, f"run the commands in web/locale/README.md; not in {domain}.po: {sorted(missing)[:10]}"
    untranslated = [m.id for m in cat if m.id and (not all(m.string) if isinstance(m.string, tuple) else not m.string)]
    assert not untranslated, untranslated[:10]
    assert not [m.id for m in cat if m.id and m.fuzzy]


@pytest.mark.parametrize("domain", ["messages", "js"])
def test_translations_keep_every_placeholder(domain: str) -> None:
    for m in catalogue(domain):
        if not m.id:
            continue
        source = m.id[-1] if isinstance(m.id, tuple) else m.id
        for text in (m.string if isinstance(m.string, tuple) else (m.string,)):
            assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(source)), (m.id, text)


@pytest.mark.parametrize("header, lang", [
    ("ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7", "ru"),
    ("en-US,en;q=0.9,ru;q=0.8", "en"),
    ("de-DE,fr;q=0.9", "en"),
    ("", "en"),
    (None, "en"),
    ("fr;q=1, ru;q=0.5, en;q=0.4", "ru"),
    ("ru;q=0, en;q=0.1", "en"),
    ("ru;q=abc", "en"),
])
def test_the_browser_language_is_the_first_supported_one(header: str | None, lang: str) -> None:
    assert i18n.negotiate(header) == lang


def test_the_switch_wins_over_the_browser() -> None:
    assert i18n.choose("en", "ru-RU,ru") == "en"
    assert i18n.choose("xx", "ru-RU,ru") == "ru"


def test_dates_read_like_dates_in_each_language() -> None:
    stamp = "2026-12-01T09:26:18.123456+00:00"
    i18n.set_language("ru")
    assert i18n.human_datetime(stamp).replace("\u202f", " ") == "1 дек. 2026 г., 09:26"
    i18n.set_language("en")
    assert "Dec 1, 2026" in i18n.human_datetime(stamp) and ".123456" not in i18n.human_datetime(stamp)
    assert i18n.human_datetime(None) == "—"


def test_gettext_follows_the_request_language() -> None:
    i18n.set_language("ru")
    assert i18n.gettext("Flows") == "Сценарии"
    assert i18n.ngettext("%(n)s error", "%(n)s errors", 5) % {"n": 5} == "5 ошибок"
    assert i18n.js_catalogue("ru")["All changes saved"] == "Всё сохранено"
    i18n.set_language("en")
    assert i18n.gettext("Flows") == "Flows"
    assert i18n.js_catalogue("en") == {}


def test_states_without_a_way_to_the_end_are_one_line() -> None:
    i18n.set_language("en")
    issues = [{"code": "no_path_to_final", "severity": "error", "states": [s], "transitions": [],
               "message": 'No final state ... the flow has no final state. Mark it "final": true.',
               "params": {"state": s, "no_final": True}}
              for s in ("ask", "confirm", "pay")]
    issues.append({"code": "undefined_variable", "severity": "warning", "states": ["ask"], "transitions": [],
                   "message": "reads {phone}", "params": {"key": "phone"}})
    lines = group_issues(issues)
    assert [line["code"] for line in lines] == ["no_path_to_final", "undefined_variable"]
    assert lines[0]["states"] == ["ask", "confirm", "pay"] and lines[0]["count"] == 3
    assert "«ask», «confirm» and «pay»" in lines[0]["text"]
    assert '"final"' not in lines[0]["text"] and "no_path_to_final" not in lines[0]["title"]
    assert "«phone»" in lines[1]["text"]


def test_diff_fields_are_named_as_in_the_forms() -> None:
    i18n.set_language("en")
    assert field_name("say[0].text") == "message 1"
    assert field_name("say[1].buttons[0][0].payload") == "buttons of message 2"
    assert field_name("input.type") == "input type"
    i18n.set_language("ru")
    assert field_name("say[0].text") == "сообщение 1"
    i18n.set_language("en")


def test_api_hints_are_dropped_from_refusals() -> None:
    assert without_api_words("There is no flow 'x'; GET /api/flows lists the flows.") == "There is no flow 'x'."
    assert without_api_words("A flow with id 'x' already exists; PUT /api/flows/x replaces its draft.") == \
        "A flow with id 'x' already exists."


def test_a_failing_test_step_reads_in_the_readers_language() -> None:
    detail = {"path": "Happy", "message": 'step 1 (привет): replies expected ["A"], got ["B"]', "test": "Happy",
              "step": 0, "shown": "привет", "differs": ["replies", "state"], "error": None,
              "expected": {"replies": ["Как вас зовут?"], "state": "ask_name"},
              "actual": {"replies": ["Не понял", "Как вас зовут?"], "state": None}}
    i18n.set_language("ru")
    assert human_detail(detail)["message"] == (
        "шаг 1 (привет): ответы: ожидалось «Как вас зовут?», получено «Не понял» / «Как вас зовут?»; "
        "состояние: ожидалось «ask_name», получено —")
    i18n.set_language("en")
    assert human_detail(detail)["message"].startswith("step 1 (привет): replies: expected «Как вас зовут?»")


def refusal(text: str, kind: str) -> DocumentSyntaxError:
    try:
        parse_text(text, kind)
    except DocumentSyntaxError as exc:
        return exc
    raise AssertionError(f"{text!r} parsed")


def test_a_file_that_does_not_parse_is_told_where_in_the_readers_language() -> None:
    said = refusal('{"id": "x",\n  bad}', "json")
    assert (said.code, said.params) == ("syntax_at", {"format": "JSON", "line": 2, "column": 3})
    i18n.set_language("ru")
    assert syntax_problem(said) == "Это некорректный JSON: посмотрите строку 2, столбец 3."
    assert syntax_problem(refusal("a: [1, 2\nb: 3", "yaml")).startswith("Это некорректный YAML: посмотрите строку")
    i18n.set_language("en")
    assert syntax_problem(said) == "This is not valid JSON: look at line 2, column 3."
    deep = DocumentSyntaxError("The document is nested too deeply to read.")
    assert syntax_problem(deep) == "The document is nested too deeply to read."


def test_refusals_name_flows_and_bots_from_their_params_not_from_the_english_sentence() -> None:
    from server.errors import Conflict, NotFound
    from web.messages import human_message

    i18n.set_language("ru")
    try:
        exists = Conflict("A flow with id 'reg' already exists.", code="flow_exists", params={"flow": "reg"})
        assert "reg" in human_message(exists) and "already" not in human_message(exists)
        gone = NotFound("Nothing by this name: 'decoy'.", {"bot": "shop-bot"})
        assert "shop-bot" in human_message(gone) and "decoy" not in human_message(gone)
        long_note = {"path": "note", "message": "at most 500 characters", "code": "too_long", "params": {"max": 500}}
        assert human_detail(long_note)["message"] == human_detail({**long_note, "message": "x"})["message"]
        assert "500" in human_detail(long_note)["message"] and "at most" not in human_detail(long_note)["message"]
    finally:
        i18n.set_language("en")
