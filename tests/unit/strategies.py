"""Hypothesis strategies for flow documents that `flows.load.load` accepts.

Import from tests in tests/unit as `from strategies import flow_documents`.
The documents are format-valid but not necessarily graph-valid (unreachable states, dead ends,
missing input transitions are all possible); `start` and every transition's `from`/`to` always name
existing states, and explicit ids are unique.
"""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from flows.model import ATTACHMENT_KINDS, COMMANDS, INPUT_TYPES, OPS

# Patterns that compile; a mix of anchored and searched ones.
PATTERNS = (r"^\d{5}$", r"да|yes", r"^[A-Z]{2}\d+$", r"\w+@\w+", r"^(?:ok|okay)$", r"[а-я]+", r".")
_LOWER = "abcdefghijklmnopqrstuvwxyz"
# Built from plain alphabets rather than from_regex: much cheaper to draw.
STATE_IDS = st.builds(str.__add__, st.sampled_from(_LOWER), st.text(_LOWER + "0123456789_", max_size=10))
KEYS = st.builds(str.__add__, st.sampled_from(_LOWER + _LOWER.upper() + "_"),
                 st.text(_LOWER + "ABCXYZ0123456789_", max_size=8))
WORDS = st.sampled_from(["да", "нет", "yes", "no", "/menu", "ok", "Далее", "назад", "1", "x"])
# Any Unicode except lone surrogates (JSON text cannot carry them), so dumps are exercised hard.
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)
TEMPLATES = st.one_of(
    st.sampled_from(["Привет, {name}!", "Телефон: {phone}", "{{literal}} braces", "Шаг {step} из 5", "Готово."]),
    ANY_TEXT,
)
FLOW_IDS = st.builds(str.__add__, st.sampled_from(_LOWER), st.text(_LOWER + "0123456789_-", max_size=12))
NUMBERS = st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-100, 100),
                    st.floats(-100, 100, allow_nan=False, allow_infinity=False), WORDS, ANY_TEXT)


def _maybe(draw: st.DrawFn, key: str, strategy: st.SearchStrategy[Any], into: dict[str, Any]) -> None:
    if draw(st.booleans()):
        into[key] = draw(strategy)


@st.composite
def buttons(draw: st.DrawFn) -> dict[str, str]:
    """A callback button or, now and then, a link button or a request for a contact or location."""
    text = draw(st.one_of(WORDS, ANY_TEXT))
    sort = draw(st.integers(0, 6))
    if sort == 0:
        return {"text": text, "url": draw(st.sampled_from(["https://example.org", "http://a.example/x?y=1",
                                                            "max://chat/1"]))}
    if sort == 1:
        return {"text": text, "request": draw(st.sampled_from(["contact", "location"]))}
    return {"text": text, "payload": draw(st.one_of(WORDS, ANY_TEXT))}


keyboards = st.lists(st.lists(buttons(), min_size=1, max_size=3), max_size=3)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """One `say` message, maybe with buttons."""
    message: dict[str, Any] = {"text": draw(TEMPLATES)}
    _maybe(draw, "buttons", keyboards, message)
    return message


@st.composite
def inputs(draw: st.DrawFn, input_type: str | None = None) -> dict[str, Any]:
    """A state's `input` of any type with options valid for that type."""
    kind = input_type or draw(st.sampled_from(INPUT_TYPES))
    spec: dict[str, Any] = {"type": kind}
    _maybe(draw, "save_as", KEYS, spec)
    _maybe(draw, "error", TEMPLATES, spec)
    _maybe(draw, "max_attempts", st.integers(1, 5), spec)
    if kind == "text":
        _maybe(draw, "min_length", st.integers(0, 5), spec)
        _maybe(draw, "max_length", st.integers(0, 200), spec)
    elif kind in ("number", "integer"):
        _maybe(draw, "min", NUMBERS, spec)
        _maybe(draw, "max", NUMBERS, spec)
    elif kind == "choice":
        spec["choices"] = draw(st.lists(st.one_of(WORDS, ANY_TEXT), min_size=1, max_size=4))
    elif kind == "regex":
        spec["pattern"] = draw(st.sampled_from(PATTERNS))
    elif kind == "attachment":
        _maybe(draw, "kinds", st.lists(st.sampled_from(ATTACHMENT_KINDS), min_size=1, max_size=3, unique=True),
               spec)
    return spec


@st.composite
def states(draw: st.DrawFn, state_id: str) -> dict[str, Any]:
    """A state with random messages, maybe an input, maybe final."""
    state: dict[str, Any] = {"id": state_id}
    _maybe(draw, "title", ANY_TEXT, state)
    _maybe(draw, "final", st.booleans(), state)
    _maybe(draw, "say", st.lists(messages(), max_size=3), state)
    if not state.get("final"):
        _maybe(draw, "input", inputs(), state)
    _maybe(draw, "note", ANY_TEXT, state)
    _maybe(draw, "x-color", st.sampled_from(["red", "#00ff00"]), state)
    return state


@st.composite
def conditions(draw: st.DrawFn) -> dict[str, Any]:
    """One `if` clause with a value that suits its op."""
    op = draw(st.sampled_from(OPS))
    condition: dict[str, Any] = {"var": draw(KEYS), "op": op}
    if op in ("in", "not_in"):
        condition["value"] = draw(st.lists(SCALARS, max_size=4))
    elif op == "matches":
        condition["value"] = draw(st.sampled_from(PATTERNS))
    elif op not in ("set", "unset"):
        condition["value"] = draw(SCALARS)
    return condition


actions = st.one_of(
    st.builds(lambda url: {"type": "webhook", "url": url},
              st.sampled_from(["https://crm.example/leads", "http://8.8.8.8:9/hook", "https://[2001:4860::8888]/x"])),
    st.builds(lambda: {"type": "clear"}),
)


@st.composite
def transitions(draw: st.DrawFn, ids: list[str], index: int) -> dict[str, Any]:
    """A transition between existing states with any trigger and the fields that trigger needs."""
    on = draw(st.sampled_from(("input", "text", "button", "attachment", "event", "timeout", "invalid", "else")))
    tr: dict[str, Any] = {}
    if draw(st.booleans()):
        tr["id"] = f"t{index}"
    tr.update({"from": draw(st.sampled_from(ids)), "to": draw(st.sampled_from(ids)), "on": on})
    if on == "text":
        which = draw(st.sampled_from(("match", "pattern", "both")))
        if which in ("match", "both"):
            tr["match"] = draw(st.lists(WORDS, min_size=1, max_size=3))
        if which in ("pattern", "both"):
            tr["pattern"] = draw(st.sampled_from(PATTERNS))
    elif on == "button":
        tr["payload"] = draw(st.one_of(WORDS, ANY_TEXT))
    elif on == "attachment":
        _maybe(draw, "kinds", st.lists(st.sampled_from(ATTACHMENT_KINDS), min_size=1, max_size=3, unique=True), tr)
    elif on == "event":
        tr["name"] = draw(st.sampled_from(["paid", "operator_reply", "cancelled"]))
    elif on == "timeout":
        tr["after"] = draw(st.one_of(st.integers(1, 3600), st.floats(1, 3600, allow_nan=False)))
    _maybe(draw, "if", st.lists(conditions(), max_size=3), tr)
    _maybe(draw, "set", st.dictionaries(KEYS, TEMPLATES, max_size=3), tr)
    _maybe(draw, "actions", st.lists(actions, max_size=2), tr)
    return tr


@st.composite
def settings(draw: st.DrawFn) -> dict[str, Any]:
    """Settings with a reminder always due before the session expires."""
    result: dict[str, Any] = {}
    ttl = draw(st.one_of(st.integers(2, 604800), st.floats(2, 604800, allow_nan=False)))
    if draw(st.booleans()):
        result["session_ttl"] = ttl
    else:
        ttl = 1800
    if draw(st.booleans()):
        reminder: dict[str, Any] = {"after": draw(st.integers(1, int(ttl) - 1)), "text": draw(TEMPLATES)}
        _maybe(draw, "buttons", keyboards, reminder)
        result["reminder"] = reminder
    _maybe(draw, "fallback", TEMPLATES, result)
    _maybe(draw, "start_on", st.sampled_from(("any", "command")), result)
    return result


@st.composite
def command_specs(draw: st.DrawFn) -> dict[str, Any]:
    """Some global commands: each disabled (null) or with any subset of its fields."""
    result: dict[str, Any] = {}
    for name in COMMANDS:
        choice = draw(st.integers(0, 3))
        if choice == 0:
            continue
        if choice == 1:
            result[name] = None
            continue
        spec: dict[str, Any] = {}
        _maybe(draw, "match", st.lists(st.sampled_from([f"/{name}", name, "стоп", "меню"]), max_size=3), spec)
        _maybe(draw, "reply", TEMPLATES, spec)
        result[name] = spec
    return result


@st.composite
def flow_documents(draw: st.DrawFn, max_states: int = 6, max_transitions: int = 12) -> dict[str, Any]:
    """A random document that loads: states of every input type, transitions of every trigger."""
    ids = draw(st.lists(STATE_IDS, min_size=1, max_size=max_states, unique=True))
    doc: dict[str, Any] = {"format": "botflow/v1", "id": draw(FLOW_IDS)}
    _maybe(draw, "title", ANY_TEXT, doc)
    doc["start"] = draw(st.sampled_from(ids))
    _maybe(draw, "settings", settings(), doc)
    _maybe(draw, "commands", command_specs(), doc)
    doc["states"] = [draw(states(state_id)) for state_id in ids]
    count = draw(st.integers(0, max_transitions))
    trs = [draw(transitions(ids, i)) for i in range(count)]
    if trs or draw(st.booleans()):
        doc["transitions"] = trs
    if draw(st.booleans()):
        doc["layout"] = {state_id: {"x": draw(st.integers(-500, 500)), "y": draw(st.integers(-500, 500))}
                         for state_id in ids}
    _maybe(draw, "x-owner", st.sampled_from(["sales", "support"]), doc)
    return doc


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON-like value, as key/index tuples (the value itself first), for damage tests."""
    found = [prefix]
    if isinstance(value, dict):
        for key, sub in value.items():
            found += paths(sub, prefix + (key,))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            found += paths(sub, prefix + (i,))
    return found
