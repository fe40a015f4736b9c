"""Every validation issue code reads in Russian in the designer, from its code and params, not its English text."""
from __future__ import annotations

from typing import Any

import pytest

from flows.load import load
from flows.validate import SEVERITIES, bounded, validate
from web import i18n
from web.issues import TITLES, group_issues

LATIN_SENTENCE = ("State ", "Transition ", "There is no", " cannot ", " the ", "Tick ")


def state(state_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": state_id, "say": [{"text": "?"}], **extra}


def asking(state_id: str, key: str | None = None, **extra: Any) -> dict[str, Any]:
    return state(state_id, input={"type": "text", "save_as": key or state_id}, **extra)


def go(tr_id: str, source: str, target: str, on: str = "input", **extra: Any) -> dict[str, Any]:
    return {"id": tr_id, "from": source, "to": target, "on": on, **extra}


def document(states: list[dict[str, Any]], transitions: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    doc = {"format": "botflow/v1", "id": "t", "title": "T", "start": states[0]["id"], "states": states,
           "transitions": transitions}
    doc.update(top)
    return doc


# Flows that between them raise every issue code the validator knows.
FLOWS = [
    document([state("a")], [], start=""),  # no_start, dead_end
    document([asking("a"), asking("a"), state("done", final=True)],
             [go("t1", "a", "nowhere"), go("t1", "a", "done"), go("t2", "a", "done"),
              go("t3", "done", "a", "button", payload="x")]),
    document([asking("a", say=[{"text": "x" * 5000}]), asking("b"), asking("c"), state("loop"),
              state("done", final=True, say=[{"text": "Hi {name} **bold** text"}])],
             [go("t1", "a", "done"), go("t2", "a", "done"), go("t3", "c", "loop"), go("t4", "loop", "c")],
             commands={"cancel": None}),
    document([asking("a", say=[{"text": {"en": "Hello", "ru": "Привет"}}]), state("done", final=True)],
             [go("t1", "a", "done"), go("t2", "a", "done", on="else")], languages=["en", "ru", "de"]),
    document([state("a"), state("b")], [go("t1", "a", "b")]),  # no final state at all
]


def raised() -> list[dict[str, Any]]:
    issues = []
    for doc in FLOWS:
        try:
            issues += [item.to_dict() for item in validate(load(doc))]
        except Exception as exc:  # a fixture the loader refuses is a broken test, said plainly
            raise AssertionError(f"fixture flow does not load: {exc}") from exc
    return issues


def test_the_fixtures_raise_every_code() -> None:
    assert {item["code"] for item in raised()} == set(SEVERITIES)


def test_every_code_has_a_title() -> None:
    assert set(TITLES) == set(SEVERITIES)


def rendered(lang: str, issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i18n.set_language(lang)
    try:
        return group_issues(issues)
    finally:
        i18n.set_language("en")


def test_every_issue_code_renders_in_russian() -> None:
    issues = raised()
    english, russian = rendered("en", issues), rendered("ru", issues)
    assert [line["code"] for line in english] == [line["code"] for line in russian]
    for en, ru in zip(english, russian):
        assert ru["title"] != en["title"], f"no Russian title for {ru['code']}: {en['title']}"
        assert ru["text"] != en["text"], f"no Russian sentence for {ru['code']}: {en['text']}"
        assert not any(words in ru["text"] for words in LATIN_SENTENCE), (ru["code"], ru["text"])
        assert ru["text"] not in {item["message"] for item in issues}


def test_the_count_of_unlisted_issues_is_said_in_russian() -> None:
    issues = [item.to_dict() for item in bounded(validate(load(FLOWS[4])), per_code=0)]
    more = [line for line in rendered("ru", issues) if "more" in line["params"]]
    assert more and all(line["text"].startswith("Ещё")  for line in more), more


@pytest.mark.parametrize("code", sorted(SEVERITIES))
def test_each_code_says_its_own_names(code: str) -> None:
    """The names in a Russian sentence come from the issue's params and lists, not a parse of the English."""
    issues = [item for item in raised() if item["code"] == code]
    assert issues and all(isinstance(item["params"], dict) for item in issues)
    line = rendered("ru", issues[:1])[0]
    for name in (issues[0]["states"] or [])[:1]:
        if code not in ("no_start", "missing_translation"):  # these name languages and counts, not states
            assert f"«{name}»" in line["text"], (code, line["text"])


def test_issue_sentences_name_states_by_their_titles_and_keep_ids_for_hover() -> None:
    doc = document([asking("ask_name", title="Имя"), asking("ask_age"), state("done", final=True, title="Готово")],
                   [go("t1", "ask_name", "done"), go("t2", "ask_name", "done")])
    issues = [item.to_dict() for item in validate(load(doc))]
    lines = {line["code"]: line for line in group_issues(issues, None, doc)}
    assert "«Имя»" in lines["ambiguous_transition"]["text"]
    assert "«Имя» → «Готово»" in lines["ambiguous_transition"]["text"]
    assert "ask_name" not in lines["ambiguous_transition"]["text"]
    assert "t1" in lines["ambiguous_transition"]["ids"]
    assert "«ask_age»" in lines["unreachable_state"]["text"]  # no title: the id is what there is
