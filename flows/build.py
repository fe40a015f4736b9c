"""From a checked document to the typed Flow: transition ids filled in, then the frozen model built."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from flows.languages import listed, pick, pick_choices
from flows.model import (
    COMMANDS, DEFAULT_FALLBACK, DEFAULT_LOST_PLACE, DEFAULT_SESSION_TTL, Action, Button, Command, Condition, Flow, Input,
    Message, Reminder, Settings, State, Transition,
)

T = TypeVar("T")
# A sent text (a string, or an object by language) as the text of the language being built.
Local = Callable[[Any], str]
Choices = Callable[[Any], tuple[tuple[str, ...], tuple[str, ...]]]


def _direct(cls: type[T]) -> Callable[..., T]:
    """A keyword constructor for a frozen, slotted model class that fills the slots directly.

    The generated `__init__` of a frozen dataclass goes through `object.__setattr__` for every field,
    which is most of the cost of building a large flow; the result here is the same object.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if hasattr(cls, "__post_init__") or any(f.default_factory is not dataclasses.MISSING for f in fields):
        raise TypeError(f"{cls.__name__} does more than store its fields; build it with its own __init__")
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    params, body = [], []
    for f in fields:
        scope[f"_set_{f.name}"] = getattr(cls, f.name).__set__  # the slot's own descriptor
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})")
    source = f"def make(*, {', '.join(params)}):\n    self = _new(_cls)\n" + "\n".join(body) + "\n    return self\n"
    exec(source, scope)  # noqa: S102 - the text is built from the model's own field names only
    make: Callable[..., T] = scope["make"]
    return make


_Button, _Message, _Input, _State = _direct(Button), _direct(Message), _direct(Input), _direct(State)
_Condition, _Action, _Transition = _direct(Condition), _direct(Action), _direct(Transition)

DEFAULT_COMMANDS: dict[str, Command | None] = {
    "cancel": Command(match=("/cancel",), reply="Диалог отменён."),
    "restart": Command(match=("/start",), reply=None),
    "back": None,
    "help": None,
}


def normalise(raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` with every transition id filled in, as a new top-level object and a new transitions list.

    Only what changes is copied: a transition given an id becomes a new object, everything else is
    shared with `raw` (documents are values here: nothing writes into a loaded document).
    """
    document = dict(raw)
    transitions = raw.get("transitions")
    if not transitions:
        return document
    document["transitions"] = transitions = list(transitions)
    taken = {tr["id"] for tr in transitions if "id" in tr}
    if len(taken) == len(transitions):
        return document  # every id given (and distinct): nothing to generate
    # Where each base's search for a free number stopped: all below it are taken, and stay taken, so
    # thousands of transitions between the same two states cost one step each, not one per earlier one.
    reached: dict[str, int] = {}
    for index, tr in enumerate(transitions):
        if "id" in tr:
            continue
        base = f"{tr['from']}__{tr['to']}"
        n = reached.get(base, 1)
        candidate = base if n == 1 else f"{base}_{n}"
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        reached[base] = n
        taken.add(candidate)
        transitions[index] = {"id": candidate, **tr}
    return document


def _buttons(rows: list[list[dict[str, Any]]] | None, tx: Local) -> tuple[tuple[Button, ...], ...]:
    if not rows:
        return ()
    return tuple([
        tuple([_Button(text=t if (t := b["text"]).__class__ is str else tx(t), payload=b.get("payload"),
                       url=b.get("url"), request=b.get("request")) for b in row]) for row in rows])


def _message(raw: dict[str, Any], tx: Local) -> Message:
    get = raw.get
    text = raw["text"]
    return _Message(text=text if text.__class__ is str else tx(text), buttons=_buttons(get("buttons"), tx),
                    format=get("format"), image=get("image"), upload=get("upload"))


def _input(spec: dict[str, Any], tx: Local, cx: Choices) -> Input:
    get = spec.get
    error, choices = get("error"), get("choices", ())
    choices, values = cx(choices) if choices.__class__ is dict else (tuple(choices), ())
    return _Input(
        type=spec["type"], save_as=get("save_as"), error=error if error is None or error.__class__ is str else tx(error),
        max_attempts=get("max_attempts"), min_length=get("min_length"), max_length=get("max_length"),
        min=get("min"), max=get("max"), choices=choices, pattern=get("pattern"), kinds=tuple(get("kinds", ())),
        choice_values=values)


def _state(raw: dict[str, Any], tx: Local, cx: Choices) -> State:
    get = raw.get
    spec = get("input")
    say = get("say")
    return _State(
        id=raw["id"], title=get("title", ""), final=get("final", False),
        say=tuple([_message(m, tx) for m in say]) if say else (),
        input=None if spec is None else _input(spec, tx, cx), note=get("note", ""),
        after_press=get("after_press", "keep"))


def _condition(raw: dict[str, Any]) -> Condition:
    value = raw.get("value")
    # Lists become tuples so the frozen model stays hashable.
    return _Condition(var=raw["var"], op=raw["op"], value=tuple(value) if isinstance(value, list) else value)


def _transition(raw: dict[str, Any]) -> Transition:
    get = raw.get
    after, conditions, assigned, actions = get("after"), get("if"), get("set"), get("actions")
    return _Transition(
        id=raw["id"], source=raw["from"], target=raw["to"], on=raw["on"], payload=get("payload"),
        match=tuple(get("match", ())), pattern=get("pattern"), kinds=tuple(get("kinds", ())),
        name=get("name"), after=float(after) if after is not None else None,
        conditions=tuple([_condition(c) for c in conditions]) if conditions else (),
        set=tuple([(k, v) for k, v in assigned.items() if not k.startswith("x-")]) if assigned else (),
        actions=tuple([_Action(type=a["type"], url=a.get("url")) for a in actions]) if actions else (),
        language=get("language"))


def _settings(raw: dict[str, Any], tx: Local) -> Settings:
    rem = raw.get("reminder")
    reminder = None
    if rem is not None:
        reminder = Reminder(after=rem["after"], text=tx(rem["text"]), buttons=_buttons(rem.get("buttons"), tx))
    return Settings(
        session_ttl=raw.get("session_ttl", DEFAULT_SESSION_TTL), reminder=reminder,
        fallback=tx(raw.get("fallback", DEFAULT_FALLBACK)), start_on=raw.get("start_on", "any"),
        lost_place=tx(raw.get("lost_place", DEFAULT_LOST_PLACE)))


def _commands(raw: dict[str, Any], tx: Local) -> dict[str, Command | None]:
    commands: dict[str, Command | None] = {}
    for name in COMMANDS:
        default = DEFAULT_COMMANDS[name]
        if name not in raw:
            commands[name] = default
            continue
        given = raw[name]
        if given is None:
            commands[name] = None
            continue
        # Defaults apply field by field: a given field wins, a missing one keeps the default.
        match = given["match"] if "match" in given else (default.match if default else ())
        reply = given["reply"] if "reply" in given else (default.reply if default else None)
        commands[name] = Command(match=tuple(match), reply=None if reply is None else tx(reply))
    return commands


def _layout(raw: dict[str, Any]) -> dict[str, dict[str, float]]:
    layout: dict[str, dict[str, float]] = {}
    for key, pos in raw.items():
        if isinstance(pos, dict) and all(
                isinstance(pos.get(c), (int, float)) and not isinstance(pos.get(c), bool) for c in "xy"):
            layout[key] = {"x": float(pos["x"]), "y": float(pos["y"])}
    return layout


def build(document: dict[str, Any], language: str | None = None,
          translations: dict[str, Flow] | None = None) -> Flow:
    """The typed Flow of a checked, normalised document, its texts in `language` (None: the default)."""
    codes = listed(document)
    default = codes[0] if codes else ""
    code = language if language in codes else (default or None)

    def tx(value: Any) -> str:
        return pick(value, code, default)

    def cx(value: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return pick_choices(value, code, default)

    flow = Flow(
        id=document["id"], title=document.get("title", ""), start=document.get("start", ""),
        settings=_settings(document.get("settings", {}), tx), commands=_commands(document.get("commands", {}), tx),
        states=tuple([_state(s, tx, cx) for s in document["states"]]),
        transitions=tuple([_transition(t) for t in document.get("transitions", ())]),
        layout=_layout(document.get("layout", {})), document=document, languages=codes, language=code,
        translations={} if translations is None else translations)
    if code is not None:
        flow.translations.setdefault(code, flow)
    return flow


def localized(flow: Flow, code: str | None) -> Flow:
    """The same flow with its texts in language `code` (built once, then kept); itself for its own or an
    unlisted language or a flow without languages."""
    if code == flow.language or not flow.languages:
        return flow
    known = flow.translations
    found = known.get(code) if code is not None else None
    if found is None:
        if code not in flow.languages:
            return known.get(flow.languages[0], flow)
        found = known[code] = build(flow.document, code, known)
    if found.version != flow.version:  # the version is set on a frozen flow after it is built
        found.version = flow.version
    return found
