"""Loading flow documents: parsing, every class of format error, defaults, generated ids."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import flow_documents, paths

from flows.errors import FlowFormatError
from flows.load import load
from flows.model import Command

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "registration.json"


def base() -> dict[str, Any]:
    """A small valid document the cases below break one field at a time."""
    return {
        "format": "botflow/v1", "id": "demo", "title": "Demo", "start": "ask_name",
        "settings": {"session_ttl": 1800},
        "states": [
            {"id": "ask_name", "say": [{"text": "Имя?"}], "input": {"type": "text", "save_as": "name"}},
            {"id": "ask_phone", "say": [{"text": "Телефон?", "buttons": [[{"text": "Назад", "payload": "back"}]]}],
             "input": {"type": "phone", "save_as": "phone"}},
            {"id": "done", "final": True, "say": [{"text": "Готово, {name}"}]},
        ],
        "transitions": [
            {"id": "t_name", "from": "ask_name", "to": "ask_phone", "on": "input"},
            {"id": "t_phone", "from": "ask_phone", "to": "done", "on": "input",
             "if": [{"var": "name", "op": "set"}]},
        ],
    }


def details_of(doc: Any) -> list[dict[str, str]]:
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    return caught.value.details


def mutated(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    doc = base()
    change(doc)
    return doc


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _delete(*path: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


def _add_transition(tr: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["transitions"].append({"from": "ask_name", "to": "done", **tr})


def _input(spec: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return _set(("states", 0, "input"), spec)


# (change, path of the one detail, words the message must contain)
CASES: dict[str, tuple[Callable[[dict[str, Any]], Any], str, tuple[str, ...]]] = {
    "wrong format": (_set(("format",), "botflow/v2"), "format", ('"botflow/v1"', '"botflow/v2"')),
    "missing format": (_delete("format"), "format", ('"format"',)),
    "format not a string": (_set(("format",), 1), "format", ("botflow/v1",)),
    "bad flow id": (_set(("id",), "Demo Flow"), "id", ("not valid", "lowercase")),
    "flow id too long": (_set(("id",), "a" * 65), "id", ("1-64",)),
    "missing flow id": (_delete("id"), "id", ('"id"',)),
    "missing states": (_delete("states"), "states", ('"states"',)),
    "states not a list": (_set(("states",), {}), "states", ("list",)),
    "title not a string": (_set(("title",), 3), "title", ("string", "3")),
    "start not a string": (_set(("start",), ["ask_name"]), "start", ("string",)),
    "unknown top-level field": (_set(("flow_name",), "x"), "flow_name", ('unknown field "flow_name"', "x-")),
    "layout not an object": (_set(("layout",), []), "layout", ("object",)),
    "bad state id": (_set(("states", 0, "id"), "Ask-Name"), "states[0].id", ("not valid", "awaiting_phone")),
    "state id with dash": (_set(("states", 0, "id"), "ask-name"), "states[0].id", ("not valid",)),
    "missing state id": (_delete("states", 0, "id"), "states[0].id", ('"id"',)),
    "state not an object": (_set(("states", 1), "ask_phone"), "states[1]", ("object",)),
    "final not a boolean": (_set(("states", 2, "final"), "yes"), "states[2].final", ("true or false",)),
    "note not a string": (_set(("states", 2, "note"), 5), "states[2].note", ("string",)),
    "unknown state field": (_set(("states", 2, "on_enter"), []), "states[2].on_enter", ("unknown field",)),
    "say not a list": (_set(("states", 0, "say"), "Имя?"), "states[0].say", ("list",)),
    "message without text": (_set(("states", 0, "say"), [{}]), "states[0].say[0].text", ('"text"',)),
    "buttons not rows": (_set(("states", 1, "say", 0, "buttons"), [{"text": "a", "payload": "a"}]),
                         "states[1].say[0].buttons[0]", ("row", "list")),
    "button without payload or url": (_set(("states", 1, "say", 0, "buttons"), [[{"text": "a"}]]),
                                      "states[1].say[0].buttons[0][0].payload", ('"payload"', '"url"')),
    "button with payload and url": (
        _set(("states", 1, "say", 0, "buttons"), [[{"text": "a", "payload": "a", "url": "https://x.example"}]]),
        "states[1].say[0].buttons[0][0]", ("not both",)),
    "unknown input type": (_set(("states", 1, "input", "type"), "phon"), "states[1].input.type",
                           ('unknown input type "phon"; expected one of text, phone, email', 'did you mean "phone"')),
    "input without type": (_input({"save_as": "name"}), "states[0].input.type", ('"type"',)),
    "option of another input type": (_set(("states", 1, "input", "min_length"), 3), "states[1].input.min_length",
                                     ('unknown field "min_length"', "text")),
    "min_length negative": (_input({"type": "text", "min_length": -1}), "states[0].input.min_length", ("at least 0",)),
    "max_length a fraction": (_input({"type": "text", "max_length": 2.5}), "states[0].input.max_length",
                              ("whole number",)),
    "max_attempts zero": (_input({"type": "text", "max_attempts": 0}), "states[0].input.max_attempts",
                          ("at least 1",)),
    "max_attempts boolean": (_input({"type": "text", "max_attempts": True}), "states[0].input.max_attempts",
                             ("whole number",)),
    "number min a boolean": (_input({"type": "number", "min": True}), "states[0].input.min", ("number",)),
    "number max quoted": (_input({"type": "integer", "max": "10"}), "states[0].input.max", ("without quotes",)),
    "choice without choices": (_input({"type": "choice"}), "states[0].input.choices", ('"choices"',)),
    "choice with empty choices": (_input({"type": "choice", "choices": []}), "states[0].input.choices",
                                  ("at least one",)),
    "choice entries not strings": (_input({"type": "choice", "choices": ["a", 2]}), "states[0].input.choices[1]",
                                   ("string",)),
    "regex input without pattern": (_input({"type": "regex"}), "states[0].input.pattern", ('"pattern"',)),
    "regex input bad pattern": (_input({"type": "regex", "pattern": "([0-9]"}), "states[0].input.pattern",
                                ("does not compile",)),
    "attachment kinds empty": (_input({"type": "attachment", "kinds": []}), "states[0].input.kinds",
                               ("non-empty",)),
    "attachment kind unknown": (_input({"type": "attachment", "kinds": ["photo"]}), "states[0].input.kinds[0]",
                                ('unknown attachment kind "photo"', "image")),
    "save_as not identifier": (_set(("states", 0, "input", "save_as"), "first name"), "states[0].input.save_as",
                               ("data key",)),
    "error not a string": (_set(("states", 0, "input", "error"), None), "states[0].input.error", ("string",)),
    "transitions not a list": (_set(("transitions",), {}), "transitions", ("list",)),
    "transition without from": (_delete("transitions", 0, "from"), "transitions[0].from", ('"from"',)),
    "transition without on": (_delete("transitions", 0, "on"), "transitions[0].on", ('"on"', "button")),
    "transition to not a string": (_set(("transitions", 0, "to"), 3), "transitions[0].to", ("string",)),
    "empty transition id": (_set(("transitions", 0, "id"), ""), "transitions[0].id", ("empty",)),
    "unknown trigger": (_set(("transitions", 0, "on"), "buton"), "transitions[0].on",
                        ('unknown trigger "buton"', 'did you mean "button"')),
    "button without payload": (_add_transition({"on": "button"}), "transitions[2].payload", ('"payload"',)),
    "text without match or pattern": (_add_transition({"on": "text"}), "transitions[2].match",
                                      ('"match"', '"pattern"')),
    "text with empty match": (_add_transition({"on": "text", "match": []}), "transitions[2].match",
                              ("at least one",)),
    "text with bad pattern": (_add_transition({"on": "text", "pattern": "*yes"}), "transitions[2].pattern",
                              ("does not compile",)),
    "event without name": (_add_transition({"on": "event"}), "transitions[2].name", ('"name"',)),
    "timeout without after": (_add_transition({"on": "timeout"}), "transitions[2].after", ('"after"',)),
    "timeout after below 1": (_add_transition({"on": "timeout", "after": 0.5}), "transitions[2].after",
                              ("at least 1",)),
    "timeout after quoted": (_add_transition({"on": "timeout", "after": "60"}), "transitions[2].after",
                             ("number",)),
    "attachment trigger with empty kinds": (_add_transition({"on": "attachment", "kinds": []}),
                                            "transitions[2].kinds", ("non-empty",)),
    "payload on a text trigger": (_add_transition({"on": "text", "match": ["да"], "payload": "yes"}),
                                  "transitions[2].payload", ('unknown field "payload"', "button")),
    "after on an input trigger": (_set(("transitions", 0, "after"), 5), "transitions[0].after",
                                  ("unknown field", "timeout")),
    "unknown op": (_set(("transitions", 1, "if"), [{"var": "a", "op": "eq", "value": 1},
                                                    {"var": "a", "op": "gte", "value": 1}]),
                   "transitions[1].if[1].op", ('unknown op "gte"', "eq ne lt".replace(" ", ", "))),
    "in without a list": (_set(("transitions", 1, "if"), [{"var": "a", "op": "in", "value": "x"}]),
                          "transitions[1].if[0].value", ("list",)),
    "not_in without a list": (_set(("transitions", 1, "if"), [{"var": "a", "op": "not_in", "value": 1}]),
                              "transitions[1].if[0].value", ("list",)),
    "matches bad regex": (_set(("transitions", 1, "if"), [{"var": "a", "op": "matches", "value": "[a-"}]),
                          "transitions[1].if[0].value", ("does not compile",)),
    "condition without value": (_set(("transitions", 1, "if"), [{"var": "a", "op": "eq"}]),
                                "transitions[1].if[0].value", ('"value"',)),
    "condition value an object": (_set(("transitions", 1, "if"), [{"var": "a", "op": "eq", "value": {}}]),
                                  "transitions[1].if[0].value", ("single value",)),
    "unset with a value": (_set(("transitions", 1, "if"), [{"var": "a", "op": "unset", "value": 1}]),
                           "transitions[1].if[0].value", ("unknown field",)),
    "condition without var": (_set(("transitions", 1, "if"), [{"op": "set"}]), "transitions[1].if[0].var",
                              ('"var"',)),
    "if not a list": (_set(("transitions", 1, "if"), {"var": "a", "op": "set"}), "transitions[1].if", ("list",)),
    "set value a number": (_set(("transitions", 0, "set"), {"age": 18}), "transitions[0].set.age",
                           ("strings", '"18"')),
    "set key not identifier": (_set(("transitions", 0, "set"), {"my age": "18"}), 'transitions[0].set["my age"]',
                               ("data key",)),
    "set not an object": (_set(("transitions", 0, "set"), ["a"]), "transitions[0].set", ("object",)),
    "webhook without url": (_set(("transitions", 0, "actions"), [{"type": "webhook"}]),
                            "transitions[0].actions[0].url", ('"url"',)),
    "webhook url not http": (_set(("transitions", 0, "actions"), [{"type": "webhook", "url": "ftp://x.example"}]),
                             "transitions[0].actions[0].url", ("http(s)",)),
    "clear with url": (_set(("transitions", 0, "actions"), [{"type": "clear", "url": "https://x.example"}]),
                       "transitions[0].actions[0].url", ("unknown field",)),
    "unknown action": (_set(("transitions", 0, "actions"), [{"type": "email"}]), "transitions[0].actions[0].type",
                       ('unknown action type "email"', "webhook")),
    "reminder not before ttl": (_set(("settings", "reminder"), {"after": 1800, "text": "Ау?"}),
                                "settings.reminder.after", ("session_ttl",)),
    "reminder without text": (_set(("settings", "reminder"), {"after": 60}), "settings.reminder.text", ('"text"',)),
    "session_ttl a boolean": (_set(("settings", "session_ttl"), True), "settings.session_ttl", ("number",)),
    "session_ttl zero": (_set(("settings", "session_ttl"), 0), "settings.session_ttl", ("at least 1",)),
    "unknown start_on": (_set(("settings", "start_on"), "always"), "settings.start_on", ("any, command",)),
    "fallback not a string": (_set(("settings", "fallback"), ["x"]), "settings.fallback", ("string",)),
    "unknown setting": (_set(("settings", "language"), "ru"), "settings.language", ("unknown field",)),
    "settings null": (_set(("settings",), None), "settings", ("object",)),
    "unknown command": (_set(("commands",), {"menu": {"match": ["/menu"]}}), "commands.menu",
                        ("unknown field", "cancel, restart, back, help")),
    "command not an object": (_set(("commands",), {"help": "/help"}), "commands.help", ("null",)),
    "command match not a list": (_set(("commands",), {"help": {"match": "/help"}}), "commands.help.match",
                                 ("list",)),
    "command reply not a string": (_set(("commands",), {"cancel": {"reply": 1}}), "commands.cancel.reply",
                                   ("string",)),
    "unknown command field": (_set(("commands",), {"cancel": {"text": "x"}}), "commands.cancel.text",
                              ("unknown field",)),
    "not a finite number": (_set(("states", 0, "x-weight"), math.nan), "states[0].x-weight", ("finite",)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_format_problem_is_one_detail_with_its_path(name: str) -> None:
    change, path, words = CASES[name]
    details = details_of(mutated(change))
    assert [d["path"] for d in details] == [path], details
    for word in words:
        assert word in details[0]["message"], (word, details[0]["message"])


def test_summary_sentence_counts_the_problems() -> None:
    doc = mutated(_set(("format",), "v2"))
    doc["id"] = "Bad"
    with pytest.raises(FlowFormatError) as caught:
        load(doc)
    assert caught.value.message == "The flow document has 2 problems; each detail names where and how to fix it."
    assert "format" in str(caught.value) and "id" in str(caught.value)


def test_several_problems_give_one_detail_each_in_document_order() -> None:
    doc = base()
    doc["format"] = "botflow/v0"
    doc["states"][1]["input"]["type"] = "phon"
    doc["states"][0]["input"]["min"] = 3  # belongs to number inputs
    doc["transitions"][0]["on"] = "buton"
    doc["transitions"][1]["if"].append({"var": "a", "op": "in", "value": 5})
    doc["settings"]["reminder"] = {"after": 4000, "text": "Ау?"}
    doc["transitions"].append({"from": "ask_name", "to": "done", "on": "text"})
    paths = [d["path"] for d in details_of(doc)]
    assert paths == [
        "format", "settings.reminder.after", "states[0].input.min", "states[1].input.type",
        "transitions[0].on", "transitions[1].if[1].value", "transitions[2].match",
    ]


def test_unknown_type_does_not_also_report_its_options() -> None:
    doc = base()
    doc["states"][0]["input"] = {"type": "txt", "min_length": 2, "bogus": 1}
    assert [d["path"] for d in details_of(doc)] == ["states[0].input.type", "states[0].input.bogus"]


@pytest.mark.parametrize("where", [(), ("states", 0), ("states", 0, "input"), ("states", 1, "say", 0),
                                   ("transitions", 0), ("transitions", 1, "if", 0), ("settings",)])
def test_x_keys_are_allowed_at_any_level_and_kept(where: tuple[Any, ...]) -> None:
    doc = base()
    target = doc
    for key in where:
        target = target[key]
    target["x-editor"] = {"anything": [1, {"nested": None}]}
    flow = load(doc)
    kept = flow.document
    for key in where:
        kept = kept[key]
    assert kept["x-editor"] == {"anything": [1, {"nested": None}]}


def test_layout_content_is_free_and_kept() -> None:
    doc = base()
    doc["layout"] = {"ask_name": {"x": 1.5, "y": -2, "collapsed": True}, "viewport": {"zoom": 2}, "ghost": 3}
    flow = load(doc)
    assert flow.document["layout"] == doc["layout"]
    assert flow.layout == {"ask_name": {"x": 1.5, "y": -2.0}}


@pytest.mark.parametrize("change", [
    _delete("start"),
    _set(("start",), ""),
    _set(("start",), "nowhere"),
    _set(("states", 1, "id"), "ask_name"),
    _set(("transitions", 1, "id"), "t_name"),
    _set(("transitions", 0, "to"), "missing_state"),
    _set(("states", 0, "say", 0, "text"), "x" * 5000),
    _set(("states", 1, "say", 0, "buttons", 0, 0, "payload"), "p" * 2000),
    _set(("transitions", 0, "on"), "else"),
    _set(("settings", "reminder"), {"after": 60, "text": "{unknown_key}"}),
], ids=["no start", "empty start", "unknown start", "duplicate state id", "duplicate transition id",
        "unknown target", "long text", "long payload", "else beside input", "undefined variable"])
def test_drafts_with_graph_problems_still_load(change: Callable[[dict[str, Any]], None]) -> None:
    doc = mutated(change)
    assert load(doc).document == doc


def test_empty_states_and_missing_transitions_load() -> None:
    doc = base()
    doc["states"] = []
    del doc["transitions"]
    flow = load(doc)
    assert flow.states == () and flow.transitions == ()
    assert "transitions" not in flow.document


def test_registration_example_loads() -> None:
    flow = load(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    assert flow.id == "registration" and flow.start == "ask_name"
    assert [s.id for s in flow.states] == ["ask_name", "ask_phone", "ask_email", "ask_pdn", "confirmed", "refused"]
    assert flow.state("ask_name").input.min_length == 2
    assert flow.state("confirmed").final
    button = flow.outgoing("ask_pdn")[0]
    assert (button.on, button.payload, button.set) == ("button", "yes", (("pdn_accepted", "yes"),))
    assert flow.settings.reminder.after == 900
    assert flow.command("back").match == ("/back", "назад", "back")
    assert flow.command("restart").reply is None
    assert flow.state("ask_pdn").say[0].buttons[0][1].payload == "no"


def test_model_fields_come_from_the_document() -> None:
    doc = base()
    doc["transitions"].append({"id": "t_x", "from": "ask_phone", "to": "done", "on": "timeout", "after": 30,
                               "if": [{"var": "n", "op": "in", "value": [1, "2"]}],
                               "set": {"status": "late", "x-note": 1},
                               "actions": [{"type": "webhook", "url": "https://crm.example/x"}, {"type": "clear"}]})
    tr = load(doc).transitions[-1]
    assert (tr.source, tr.target, tr.on, tr.after) == ("ask_phone", "done", "timeout", 30.0)
    assert tr.conditions[0].value == (1, "2")
    assert tr.set == (("status", "late"),)
    assert [(a.type, a.url) for a in tr.actions] == [("webhook", "https://crm.example/x"), ("clear", None)]


def test_settings_defaults() -> None:
    doc = base()
    del doc["settings"]
    settings = load(doc).settings
    assert settings.session_ttl == 1800 and settings.reminder is None
    assert settings.fallback == "Не понял. Повторите, пожалуйста." and settings.start_on == "any"


def test_commands_default_when_absent() -> None:
    flow = load(base())
    assert flow.command("cancel") == Command(match=("/cancel",), reply="Диалог отменён.")
    assert flow.command("restart") == Command(match=("/start",), reply=None)
    assert flow.command("back") is None and flow.command("help") is None


def test_command_defaults_apply_field_by_field() -> None:
    doc = base()
    doc["commands"] = {"cancel": {"reply": "Пока"}, "restart": {"reply": "Заново"}, "back": {},
                       "help": {"reply": "Справка"}}
    flow = load(doc)
    assert flow.command("cancel") == Command(match=("/cancel",), reply="Пока")
    assert flow.command("restart") == Command(match=("/start",), reply="Заново")
    # back/help without match never match
    assert flow.command("back") == Command(match=(), reply=None)
    assert flow.command("help") == Command(match=(), reply="Справка")


def test_null_disables_a_command_and_absent_keys_keep_defaults() -> None:
    doc = base()
    doc["commands"] = {"cancel": None, "help": {"match": ["/help"], "reply": "?"}}
    flow = load(doc)
    assert flow.command("cancel") is None
    assert flow.command("restart") == Command(match=("/start",), reply=None)
    assert flow.command("help") == Command(match=("/help",), reply="?")


def test_missing_transition_ids_are_generated_readably_and_uniquely() -> None:
    doc = base()
    doc["transitions"] = [
        {"from": "ask_name", "to": "ask_phone", "on": "input"},
        {"from": "ask_name", "to": "ask_phone", "on": "text", "match": ["x"]},
        {"id": "ask_phone__done", "from": "ask_phone", "to": "done", "on": "else"},
        {"from": "ask_phone", "to": "done", "on": "input"},
    ]
    flow = load(doc)
    assert [t.id for t in flow.transitions] == [
        "ask_name__ask_phone", "ask_name__ask_phone_2", "ask_phone__done", "ask_phone__done_2"]
    assert [t["id"] for t in flow.document["transitions"]] == [t.id for t in flow.transitions]
    assert "id" not in doc["transitions"][0], "the caller's document is not modified"


def test_many_transitions_between_two_states_number_on_past_given_ids() -> None:
    doc = base()
    many = [{"from": "ask_name", "to": "ask_phone", "on": "text", "match": [f"m{i}"]} for i in range(20_000)]
    many.insert(3, {"id": "ask_name__ask_phone_5", "from": "ask_name", "to": "ask_phone", "on": "input"})
    doc["transitions"] = many + doc["transitions"]
    ids = [t.id for t in load(doc).transitions][:20_001]
    assert ids[:8] == ["ask_name__ask_phone", "ask_name__ask_phone_2", "ask_name__ask_phone_3",
                       "ask_name__ask_phone_5", "ask_name__ask_phone_4", "ask_name__ask_phone_6",
                       "ask_name__ask_phone_7", "ask_name__ask_phone_8"]
    assert ids[-1] == "ask_name__ask_phone_20001" and len(set(ids)) == 20_001


def test_generated_ids_are_stable_across_saves() -> None:
    doc = base()
    for tr in doc["transitions"]:
        del tr["id"]
    first = load(doc)
    again = load(copy.deepcopy(doc))
    reloaded = load(first.document)
    assert first.document == again.document == reloaded.document


def test_document_keeps_everything_else_unchanged() -> None:
    doc = base()
    doc["x-owner"] = "sales"
    doc["layout"] = {"done": {"x": 3, "y": 4}}
    flow = load(doc)
    assert flow.document == doc
    assert flow.document is not doc


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=5),
              st.sampled_from(["text", "button", "eq", "in", "webhook", "ask_name", "botflow/v1", "x-a", "(["])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.sampled_from(["id", "on", "type", "from", "to", "op", "value", "match", "payload", "kinds", "x-k",
                         "after", "text", "buttons", "input", "say", "if", "set", "actions", "url", "var"]),
        inner, max_size=4)),
    max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flow_documents(max_states=3, max_transitions=4), st.data())
def test_any_damage_is_reported_as_details_never_a_crash(doc: dict[str, Any], data: st.DataObject) -> None:
    where = data.draw(st.sampled_from(paths(doc)[1:]))
    replacement = data.draw(JSON_VALUES)
    _set(where, replacement)(doc)
    try:
        flow = load(doc)
    except FlowFormatError as exc:
        assert exc.details and all(d["path"] and d["message"] for d in exc.details)
    else:
        assert flow.document["states"] == doc["states"]
