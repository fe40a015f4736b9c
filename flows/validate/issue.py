"""The `Issue` record every check returns, and the severities the contract fixes per code."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"

# Errors block freezing a version; warnings do not (http-api.md, "Validation issue codes").
SEVERITIES: dict[str, str] = {
    "no_start": ERROR,
    "unknown_state": ERROR,
    "duplicate_id": ERROR,
    "unreachable_state": ERROR,
    "dead_end": ERROR,
    "no_path_to_final": ERROR,
    "missing_cancel": ERROR,
    "ambiguous_transition": ERROR,
    "message_too_long": ERROR,
    "undefined_variable": WARNING,
    "final_has_exit": WARNING,
    "unreachable_transition": WARNING,
    "unformatted_markup": WARNING,
    "missing_translation": WARNING,
}

# How many names a message spells out before it says "and N more"; `states`/`transitions` list all.
SHOWN = 5


@dataclass(frozen=True, slots=True)
class Issue:
    """One finding: what is wrong, how bad, and which states and transitions to highlight."""

    code: str
    severity: str
    message: str
    states: tuple[str, ...] = ()
    transitions: tuple[str, ...] = ()
    # The figures and names the sentence is made of, so a reader's catalogue can say it in their language.
    params: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `GET /api/flows/{id}/validation` issues."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "states": list(self.states),
            "transitions": list(self.transitions),
            "params": dict(self.params),
        }


def issue(code: str, message: str, states: Iterable[str] = (), transitions: Iterable[str] = (),
          **params: Any) -> Issue:
    """An issue with the severity its code carries; names keep their order, repeats dropped."""
    return Issue(code, SEVERITIES[code], message, unique(states), unique(transitions), params)


def unique(names: Iterable[str]) -> tuple[str, ...]:
    """The names in first-seen order, each once."""
    return tuple(dict.fromkeys(names))


def names(items: Iterable[str], limit: int = SHOWN) -> str:
    """`"a", "b" and "c"` for a message, cut to `limit` names with "and N more"."""
    listed = [f'"{item}"' for item in items]
    if len(listed) > limit:
        rest = len(listed) - limit
        listed = listed[:limit] + [f"{rest} more"]
    if len(listed) <= 1:
        return "".join(listed)
    return ", ".join(listed[:-1]) + " and " + listed[-1]


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 state`, `2 states`."""
    return f"{count} {word if count == 1 else (many or word + 's')}"
