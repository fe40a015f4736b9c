"""Reading flow documents: text to data (`parse_text`), data to a typed Flow (`load`)."""
from __future__ import annotations

import copy
import json
import re
from typing import Any

import yaml

from flows.checks import item, join
from flows.errors import DocumentSyntaxError, FlowFormatError
from flows.model import (
    COMMANDS, DEFAULT_FALLBACK, DEFAULT_SESSION_TTL, Action, Button, Command, Condition, Flow, Input,
    Message, Reminder, Settings, State, Transition,
)
from flows.schema import check_document

DEFAULT_COMMANDS: dict[str, Command | None] = {
    "cancel": Command(match=("/cancel",), reply="Диалог отменён."),
    "restart": Command(match=("/start",), reply=None),
    "back": None,
    "help": None,
}


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: far faster


class _Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """YAML that reads like JSON: only true/false are booleans (so `on:` stays a key), no dates."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _reject_aliases(data: Any) -> None:
    """Aliases (*name) are refused: they make one object appear in several places, and expanding
    nested ones can blow a small text up into an enormous document."""
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        if id(value) in seen:
            where = f" at {path}" if path else ""
            raise DocumentSyntaxError(
                f"The document uses a YAML alias (*name){where}; write the value out in full instead.")
        seen.add(id(value))
        if isinstance(value, dict):
            children = [(sub, join(path, key)) for key, sub in value.items()]
        else:
            children = [(sub, item(path, i)) for i, sub in enumerate(value)]
        stack.extend(reversed(children))  # so the alias, not its anchor, is the one named


def _decode(text: str | bytes) -> str:
    if isinstance(text, str):
        return text
    try:
        return bytes(text).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentSyntaxError(
            f"The document is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
            " cannot be decoded; save the file as UTF-8.") from None


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentSyntaxError(
            f"The document is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.") from None
    except RecursionError:
        raise DocumentSyntaxError("The document is nested too deeply to read.") from None


def _parse_yaml(text: str) -> Any:
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a safe loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = exc.problem or exc.context or "unreadable text"
        raise DocumentSyntaxError(f"The document is not valid YAML: {problem}{where}.") from None
    except yaml.YAMLError as exc:
        raise DocumentSyntaxError(f"The document is not valid YAML: {exc}.") from None
    except RecursionError:
        raise DocumentSyntaxError("The document is nested too deeply to read.") from None
    _reject_aliases(data)
    return data


def parse_text(text: str | bytes, fmt: str | None = None) -> Any:
    """JSON or YAML text (fmt "json" | "yaml" | None to sniff) to a dict; DocumentSyntaxError otherwise."""
    source = _decode(text)
    if fmt not in (None, "json", "yaml"):
        raise ValueError(f"unknown document format {fmt!r}; expected 'json' or 'yaml'")
    if fmt == "json":
        data = _parse_json(source)
    elif fmt == "yaml":
        data = _parse_yaml(source)
    else:
        try:
            data = _parse_json(source)
        except DocumentSyntaxError as json_error:
            try:
                data = _parse_yaml(source)
            except DocumentSyntaxError:
                # Text that looks like JSON gets the JSON error: it is the one the author can act on.
                if source.lstrip()[:1] in ("{", "["):
                    raise json_error from None
                raise
    _require_object(data)
    return data


def _require_object(data: Any) -> None:
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {type(data).__name__}"
        raise DocumentSyntaxError(
            f"A flow document must be an object (a mapping of fields) at the top, but this one is {what}.")


def _summary(count: int) -> str:
    if count == 1:
        return "The flow document has 1 problem; the detail names where and how to fix it."
    return f"The flow document has {count} problems; each detail names where and how to fix it."


def load(raw: Any) -> Flow:
    """Check a parsed document against the format and build the Flow; FlowFormatError lists every problem."""
    _require_object(raw)
    details = check_document(raw)
    if details:
        raise FlowFormatError(_summary(len(details)), details)
    document = normalise(raw)
    return build(document)


def load_text(text: str | bytes, fmt: str | None = None) -> Flow:
    """`load(parse_text(text, fmt))`."""
    return load(parse_text(text, fmt))


def normalise(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of a valid document with every transition id filled in, otherwise unchanged."""
    document = copy.deepcopy(raw)
    transitions = document.get("transitions") or []
    taken = {tr["id"] for tr in transitions if "id" in tr}
    for index, tr in enumerate(transitions):
        if "id" in tr:
            continue
        base = f"{tr['from']}__{tr['to']}"
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        taken.add(candidate)
        transitions[index] = {"id": candidate, **tr}
    return document


def _buttons(rows: list[list[dict[str, Any]]] | None) -> tuple[tuple[Button, ...], ...]:
    return tuple(
        tuple(Button(text=b["text"], payload=b.get("payload"), url=b.get("url")) for b in row)
        for row in rows or ())


def _state(raw: dict[str, Any]) -> State:
    spec = raw.get("input")
    inp = None
    if spec is not None:
        inp = Input(
            type=spec["type"], save_as=spec.get("save_as"), error=spec.get("error"),
            max_attempts=spec.get("max_attempts"), min_length=spec.get("min_length"),
            max_length=spec.get("max_length"), min=spec.get("min"), max=spec.get("max"),
            choices=tuple(spec.get("choices", ())), pattern=spec.get("pattern"),
            kinds=tuple(spec.get("kinds", ())))
    return State(
        id=raw["id"], title=raw.get("title", ""), final=raw.get("final", False),
        say=tuple(Message(text=m["text"], buttons=_buttons(m.get("buttons"))) for m in raw.get("say", ())),
        input=inp, note=raw.get("note", ""))


def _condition(raw: dict[str, Any]) -> Condition:
    value = raw.get("value")
    # Lists become tuples so the frozen model stays hashable.
    return Condition(var=raw["var"], op=raw["op"], value=tuple(value) if isinstance(value, list) else value)


def _transition(raw: dict[str, Any]) -> Transition:
    after = raw.get("after")
    return Transition(
        id=raw["id"], source=raw["from"], target=raw["to"], on=raw["on"], payload=raw.get("payload"),
        match=tuple(raw.get("match", ())), pattern=raw.get("pattern"), kinds=tuple(raw.get("kinds", ())),
        name=raw.get("name"), after=float(after) if after is not None else None,
        conditions=tuple(_condition(c) for c in raw.get("if", ())),
        set=tuple((k, v) for k, v in raw.get("set", {}).items() if not k.startswith("x-")),
        actions=tuple(Action(type=a["type"], url=a.get("url")) for a in raw.get("actions", ())))


def _settings(raw: dict[str, Any]) -> Settings:
    rem = raw.get("reminder")
    reminder = None
    if rem is not None:
        reminder = Reminder(after=rem["after"], text=rem["text"], buttons=_buttons(rem.get("buttons")))
    return Settings(
        session_ttl=raw.get("session_ttl", DEFAULT_SESSION_TTL), reminder=reminder,
        fallback=raw.get("fallback", DEFAULT_FALLBACK), start_on=raw.get("start_on", "any"))


def _commands(raw: dict[str, Any]) -> dict[str, Command | None]:
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
        commands[name] = Command(match=tuple(match), reply=reply)
    return commands


def _layout(raw: dict[str, Any]) -> dict[str, dict[str, float]]:
    layout: dict[str, dict[str, float]] = {}
    for key, pos in raw.items():
        if isinstance(pos, dict) and all(
                isinstance(pos.get(c), (int, float)) and not isinstance(pos.get(c), bool) for c in "xy"):
            layout[key] = {"x": float(pos["x"]), "y": float(pos["y"])}
    return layout


def build(document: dict[str, Any]) -> Flow:
    """The typed Flow of a checked, normalised document."""
    return Flow(
        id=document["id"], title=document.get("title", ""), start=document.get("start", ""),
        settings=_settings(document.get("settings", {})), commands=_commands(document.get("commands", {})),
        states=tuple(_state(s) for s in document["states"]),
        transitions=tuple(_transition(t) for t in document.get("transitions", ())),
        layout=_layout(document.get("layout", {})), document=document)
