"""Side-panel form posts turned into document edits and field errors: the machinery the three forms share.

Field names are the document paths below the edited object (`say[0].text`, `input.type`,
`if[1].value`), so an error the loader reports at `states[2].say[0].text` lands next to the field.
"""
from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from flows.errors import FlowFormatError
from flows.load import load
from server.services.flows import action_allow
from web.messages import loader_words
from web.i18n import gettext as _

INDEX = re.compile(r"\[(\d{1,6})\]")


# Longer numbers (a 5000-digit value) mean nothing exact and would only trouble the server that stores them.
MAX_NUMBER_TEXT = 40


class Fields:
    """The posted form as lists of strings per name, with typed getters that record field errors."""

    def __init__(self, data: dict[str, list[str]]) -> None:
        self.data = data
        self.errors: dict[str, str] = {}

    def text(self, name: str, default: str = "") -> str:
        values = self.data.get(name)
        return values[-1] if values else default

    def all(self, name: str) -> list[str]:
        return list(self.data.get(name, []))

    def flag(self, name: str) -> bool:
        return self.text(name) in ("on", "true", "1", "yes")

    def lines(self, name: str) -> list[str]:
        return [line.strip() for line in self.text(name).splitlines() if line.strip()]

    def number(self, name: str, *, integer: bool = False, minimum: float | None = None) -> int | float | None:
        """The field as a number; blank is None; anything else records an error."""
        raw = self.text(name).strip().replace(",", ".")
        if not raw:
            return None
        if len(raw) > MAX_NUMBER_TEXT:
            self.errors[name] = _("Enter a number of at most %(n)s characters.") % {"n": MAX_NUMBER_TEXT}
            return None
        try:
            value: int | float = int(raw) if integer else float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            self.errors[name] = _("Enter a whole number.") if integer else _("Enter a number.")
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if minimum is not None and value < minimum:
            self.errors[name] = _("Enter a number of at least %(n)s.") % {"n": f"{minimum:g}"}
            return None
        return value

    def indices(self, prefix: str) -> list[int]:
        """The row numbers present for `prefix[i]...` fields, in order."""
        found = set()
        for name in self.data:
            if name.startswith(prefix + "["):
                match = INDEX.match(name, len(prefix))
                if match:
                    found.add(int(match.group(1)))
        return sorted(found)


def form_data(multi: Any) -> dict[str, list[str]]:
    """A Litestar FormMultiDict (or any mapping of lists) as plain lists of strings."""
    if hasattr(multi, "getall"):
        return {key: [str(v) for v in multi.getall(key)] for key in multi.keys()}
    return {key: list(v) if isinstance(v, list) else [str(v)] for key, v in dict(multi).items()}


def parse_literal(raw: str) -> Any:
    """A condition value: a JSON number, true, false or null as such, anything else as the text."""
    # A number too long to mean anything exact is a ValueError whose text is the field's error.
    text = raw.strip()
    if text in ("true", "false", "null"):
        return json.loads(text)
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        if len(text) > MAX_NUMBER_TEXT:
            raise ValueError(_("Enter a number of at most %(n)s characters.") % {"n": MAX_NUMBER_TEXT})
        return json.loads(text)
    return raw


def show_literal(value: Any) -> str:
    """The form text for a condition value (the inverse of parse_literal)."""
    if isinstance(value, list):
        return ", ".join(show_literal(v) for v in value)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return str(value)


def parse_action(raw: str) -> tuple[str, list[int]]:
    """`add_button:0:1` -> ("add_button", [0, 1]); "" -> ("", []); bad row numbers -> (name, [])."""
    # Row numbers are small and never negative: a negative one would pick a row from the end.
    name, *numbers = raw.split(":") if raw else [""]
    if all(re.fullmatch(r"\d{1,6}", n) for n in numbers):
        return name, [int(n) for n in numbers]
    return name, []


def anchor_for(path: str, anchors: list[str]) -> str:
    """The longest anchor the path falls under (`say[0].buttons[0][1].url` -> `say[0].buttons[0][1]`), or ""."""
    best = ""
    for anchor in anchors:
        if (path == anchor or path.startswith(anchor + ".") or path.startswith(anchor + "[")) and len(anchor) > len(best):
            best = anchor
    return best


def place_errors(details: list[dict[str, str]], prefix: str, anchors: list[str],
                 translate: Callable[[str], str] = lambda p: p) -> dict[str, str]:
    """Loader details under `prefix` (e.g. `states[3]`) by form anchor; the rest under "" (the form)."""
    out: dict[str, str] = {}
    for detail in details:
        path = detail.get("path") or ""
        local = ""
        if prefix and (path.startswith(prefix + ".") or path.startswith(prefix + "[")):
            local = translate(path[len(prefix):].lstrip("."))
        elif not prefix:
            local = translate(path)
        anchor = anchor_for(local, anchors) if local else ""
        message = loader_words(detail)
        if not anchor and local:
            message = f"{local}: {message}"
        out[anchor] = f"{out[anchor]} {message}".strip() if anchor in out else message
    return out


def format_problems(document: dict[str, Any]) -> list[dict[str, str]]:
    """What the loader rejects in `document` (empty when it loads)."""
    try:
        load(document, allow=action_allow())
    except FlowFormatError as exc:
        return exc.details or [{"path": "", "message": exc.message}]
    return []


@dataclass
class Edit:
    """The result of one form post: the edited document (None when a field is wrong) and what to show."""

    document: dict[str, Any] | None
    values: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)
    select: str | None = None  # "state:<id>" or "transition:<id>" the form edits after the post
    changed: bool = True
    # Where the loader's complaints land on this form (see `refuse`).
    prefix: str = ""
    anchors: list[str] = field(default_factory=list)
    translate: Callable[[str], str] = lambda p: p

    def refuse(self, details: list[dict[str, str]]) -> None:
        """The loader refused the edited document: its details become field errors and nothing is saved."""
        self.errors = place_errors(details, self.prefix, self.anchors, self.translate)
        self.document = None


def finish(original: dict[str, Any], document: dict[str, Any], values: dict[str, Any], errors: dict[str, str],
           prefix: str, anchors: list[str], select: str,
           translate: Callable[[str], str] = lambda p: p, *, check: bool = True) -> Edit:
    """Map field errors onto the form and decide whether to save; `check` runs the loader over the edit here
    (the editor's pages pass False: they load the edit once, in a design worker, with its validation)."""
    edit = Edit(None, values, errors, select, prefix=prefix, anchors=anchors, translate=translate)
    if errors:
        return edit
    edit.document, edit.changed = document, document != original
    problems = format_problems(document) if check else []
    if problems:
        edit.refuse(problems)
    return edit


def clean(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop optional fields left blank, so the document says only what the editor set."""
    return {k: v for k, v in obj.items() if v not in (None, "", [], {})}


def deep(document: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(document)
