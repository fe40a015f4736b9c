"""Running dialogs counted per (flow, version, state) and listed a page at a time: the shapes every store
returns and the rules they share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_PAGE = 200
CURSOR_MAX = 2048  # characters of a listing cursor (Redis's carries the users a page had no room for)
BAD_CURSOR = "cursor is not one this listing handed out; start again without it."
CountKey = tuple[str | None, int | None, str | None]


class BadSearch(ValueError):
    """A search the store cannot run (a cursor it never handed out, a limit out of range)."""


@dataclass(frozen=True, slots=True)
class Search:
    """Which running dialogs to list: `user` is a prefix, or the exact id when `exact`."""

    user: str = ""
    exact: bool = False
    state: str | None = None
    version: int | None = None
    cursor: str | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class DialogLine:
    """One running dialog as the live list shows it; `updated` is its last turn (Unix seconds)."""

    user: str
    flow: str | None
    version: int | None
    state: str | None
    updated: float


@dataclass(slots=True)
class DialogPage:
    """One page of the listing; `next` continues it (None: nothing more)."""

    dialogs: list[DialogLine]
    next: str | None = None


def line(user: str, dialog: dict[str, Any]) -> DialogLine:
    """The list line of a stored dialog."""
    version = dialog.get("version")
    return DialogLine(user, dialog.get("flow"), version if isinstance(version, int) else None,
                      dialog.get("state"), float(dialog.get("updated_at") or 0.0))


def key_of(dialog: dict[str, Any]) -> CountKey:
    """What the counts group a dialog by."""
    found = line("", dialog)
    return found.flow, found.version, found.state


def wanted(search: Search, user: str, dialog: dict[str, Any]) -> bool:
    """Whether a dialog belongs in the listing (user id, state and version filters)."""
    if (search.exact and user != search.user) or not user.startswith(search.user):
        return False
    if search.state is not None and dialog.get("state") != search.state:
        return False
    return search.version is None or dialog.get("version") == search.version


def check(search: Search) -> None:
    """Refuse a page size out of range or a cursor longer than any handed out (the API checks first; this
    guards every other caller, the pages included)."""
    if not 1 <= search.limit <= MAX_PAGE:
        raise BadSearch(f"limit must be between 1 and {MAX_PAGE}.")
    if search.cursor is not None and (len(search.cursor) > CURSOR_MAX or not search.cursor.isprintable()):
        raise BadSearch(BAD_CURSOR)


def count_rows(counts: dict[CountKey, int]) -> list[dict[str, Any]]:
    """The counts as the API shows them, by flow, version and state."""
    ordered = sorted(counts.items(), key=lambda item: (str(item[0][0]), item[0][1] or 0, str(item[0][2])))
    return [{"flow": f, "version": v, "state": s, "dialogs": n} for (f, v, s), n in ordered]
