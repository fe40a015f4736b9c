"""The `botflow/v1` document as typed, read-only data."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FORMAT = "botflow/v1"
DEFAULT_FALLBACK = "Не понял. Повторите, пожалуйста."
# Sent when the dialog store lost a running dialog (Redis restarted empty or rewound), before starting again.
DEFAULT_LOST_PLACE = "Извините, мы потеряли ваше место в диалоге. Начнём заново."
DEFAULT_SESSION_TTL = 1800
HISTORY_LIMIT = 50
MESSAGE_LIMIT = 4000
BUTTON_TEXT_LIMIT = 128
PAYLOAD_LIMIT = 1024

INPUT_TYPES = (
    "text", "phone", "email", "number", "integer", "choice", "regex", "date",
    "attachment", "contact", "location", "any",
)
TRIGGERS = ("input", "text", "button", "attachment", "event", "timeout", "invalid", "else")
OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "set", "unset", "matches")
# A project field of a state: "keep" the pressed message's buttons, or "replace" them with the pressed
# one's text, so old buttons cannot be pressed twice.
AFTER_PRESS = ("keep", "replace")
ATTACHMENT_KINDS = ("image", "video", "audio", "file", "sticker", "share", "contact", "location")
COMMANDS = ("cancel", "restart", "back", "help")
# Triggers evaluated in step 3 of "Evaluation", in document order.
MATCH_TRIGGERS = ("text", "button", "attachment", "event")


@dataclass(frozen=True, slots=True)
class Button:
    """A callback button (`payload`), a link button (`url`) or a request for a contact or location."""

    text: str
    payload: str | None = None
    url: str | None = None
    request: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message sent on entering a state, with its keyboard rows, markup and picture."""

    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()
    # MAX's markup of the text ("markdown" | "html"), None for plain text.
    format: str | None = None
    # A picture: an https link MAX fetches, or the id of a file uploaded to the project.
    image: str | None = None
    upload: str | None = None


@dataclass(frozen=True, slots=True)
class Input:
    """What a waiting state expects and how it is checked."""

    type: str
    save_as: str | None = None
    error: str | None = None
    max_attempts: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    kinds: tuple[str, ...] = ()
    # With languages: the value saved for `choices[i]` (the default language's entry); empty = the entry itself.
    choice_values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class State:
    """A node of the dialog graph."""

    id: str
    title: str = ""
    final: bool = False
    say: tuple[Message, ...] = ()
    input: Input | None = None
    note: str = ""
    # What a press on one of this state's buttons does to the message it is on (AFTER_PRESS).
    after_press: str = "keep"


@dataclass(frozen=True, slots=True)
class Condition:
    """One `if` clause: `var op value`, evaluated as data."""

    var: str
    op: str
    value: Any = None


@dataclass(frozen=True, slots=True)
class Action:
    """A side effect run after the state is saved."""

    type: str
    url: str | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """An edge: trigger, guard, assignments and actions."""

    id: str
    source: str
    target: str
    on: str
    payload: str | None = None
    match: tuple[str, ...] = ()
    pattern: str | None = None
    kinds: tuple[str, ...] = ()
    name: str | None = None
    after: float | None = None
    conditions: tuple[Condition, ...] = ()
    set: tuple[tuple[str, str], ...] = ()
    actions: tuple[Action, ...] = ()
    # Switches the dialog's language (a listed code) when the transition fires.
    language: str | None = None


@dataclass(frozen=True, slots=True)
class Command:
    """A global command; `match` empty means it never matches."""

    match: tuple[str, ...] = ()
    reply: str | None = None


@dataclass(frozen=True, slots=True)
class Reminder:
    """Sent once per idle spell in a non-final state."""

    after: float
    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Settings:
    """Flow-wide settings with the spec's defaults."""

    session_ttl: float = DEFAULT_SESSION_TTL
    reminder: Reminder | None = None
    fallback: str = DEFAULT_FALLBACK
    start_on: str = "any"
    lost_place: str = DEFAULT_LOST_PLACE


@dataclass(slots=True)
class Flow:
    """A loaded flow: the typed model plus the normalised document it came from."""

    id: str
    title: str
    start: str
    settings: Settings
    commands: dict[str, Command | None]
    states: tuple[State, ...]
    transitions: tuple[Transition, ...]
    layout: dict[str, dict[str, float]]
    document: dict[str, Any]
    # Set by whoever loaded a frozen version; None for a draft.
    version: int | None = None
    # The listed languages (the first is the default), and the one this Flow's texts are written in.
    languages: tuple[str, ...] = ()
    language: str | None = None
    # The same document in its other languages (see `flows.build.localized`), kept by the default one.
    translations: dict[str, Flow] = field(default_factory=dict, repr=False)
    _states_by_id: dict[str, State] = field(default_factory=dict, repr=False)
    _out: dict[str, tuple[Transition, ...]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        by_id: dict[str, State] = {}
        for state in self.states:
            by_id.setdefault(state.id, state)  # duplicates are a validation issue; first wins
        out: dict[str, list[Transition]] = {}
        for tr in self.transitions:
            out.setdefault(tr.source, []).append(tr)
        self._states_by_id = by_id
        self._out = {k: tuple(v) for k, v in out.items()}

    def state(self, state_id: str) -> State | None:
        """The state with this id, or None."""
        return self._states_by_id.get(state_id)

    def has_state(self, state_id: str) -> bool:
        """Whether a state with this id exists."""
        return state_id in self._states_by_id

    def outgoing(self, state_id: str) -> tuple[Transition, ...]:
        """Transitions leaving a state, in document order."""
        return self._out.get(state_id, ())

    def command(self, name: str) -> Command | None:
        """The effective command (defaults applied), or None when disabled."""
        return self.commands.get(name)
