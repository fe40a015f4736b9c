"""Plain, serialisable data the engine reads and returns: the dialog record, updates, replies, results."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from flows.events import ActionQueued, Event

replace = msgspec.structs.replace


class Dialog(msgspec.Struct, frozen=True):
    """One running dialog, defined once: the engine returns a new record for every change (`replace`),
    the stores keep it (`to_dict`, and `stores.dialog_codec` derived from these fields).

    Frozen means its fields are never reassigned; the engine copies `data` and `history` before changing them.
    """

    flow: str
    version: int | None
    state: str
    data: dict[str, Any] = {}
    history: list[str] = []
    attempts: int = 0
    started_at: float = 0.0
    # Last activity (message, press, event): the idle clock for reminders and session_ttl.
    updated_at: float = 0.0
    # When the current state was entered; a `timeout` counts from this or `updated_at`, the later one.
    entered_at: float = 0.0
    # The reminder was already sent in this idle spell.
    reminded: bool = False
    # A timeout whose `if` was false when due waits for the next activity.
    timeout_held: bool = False
    # The dialog's language (a flow with `languages`), chosen when it opened; None without languages.
    language: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """This dialog as JSON-ready data."""
        out = {
            "flow": self.flow, "version": self.version, "state": self.state,
            "data": self.data, "history": self.history, "attempts": self.attempts,
            "started_at": self.started_at, "updated_at": self.updated_at,
            "entered_at": self.entered_at, "reminded": self.reminded,
            "timeout_held": self.timeout_held,
        }
        if self.language is not None:
            out["language"] = self.language
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Dialog:
        """A dialog from `to_dict` output."""
        get = raw.get
        return cls(  # positional, in field order: keywords cost a turn a third of a microsecond more
            raw["flow"], get("version"), raw["state"], dict(get("data") or {}), list(get("history") or []),
            int(get("attempts", 0)), float(get("started_at", 0.0)), float(get("updated_at", 0.0)),
            float(get("entered_at", 0.0)), bool(get("reminded", False)), bool(get("timeout_held", False)),
            get("language"),
        )


# The record's field names, in order: the stores' codec is derived from them.
DIALOG_FIELDS: tuple[str, ...] = Dialog.__struct_fields__


@dataclass(slots=True)
class Update:
    """One incoming update, messenger-neutral.

    kind is one of: "message" (text and/or attachments), "button" (a callback press with `payload`),
    "event" (external event `name` with `event_payload`), "bot_started" (`start_payload` may be None),
    "tick" (the clock moved: fire whatever reminder or timeout is due at `now`).
    """

    kind: str
    text: str | None = None
    payload: str | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)
    name: str | None = None
    event_payload: dict[str, Any] = field(default_factory=dict)
    start_payload: str | None = None
    # The user's `user_locale` (`ru`, `en-US`, ...): a flow with languages opens the dialog in it.
    locale: str | None = None

    @classmethod
    def message(cls, text: str | None = None, attachments: list[dict[str, Any]] | None = None,
                locale: str | None = None) -> Update:
        """A text message, optionally with attachments (text is then the caption)."""
        return cls("message", text=text, attachments=list(attachments or []), locale=locale)

    @classmethod
    def button(cls, payload: str, locale: str | None = None) -> Update:
        """A callback button press."""
        return cls("button", payload=payload, locale=locale)

    @classmethod
    def event(cls, name: str, payload: dict[str, Any] | None = None) -> Update:
        """An external event sent through the API."""
        return cls("event", name=name, event_payload=dict(payload or {}))

    @classmethod
    def started(cls, payload: str | None = None, locale: str | None = None) -> Update:
        """The user pressed Start (`bot_started`), maybe through a deep link."""
        return cls("bot_started", start_payload=payload or None, locale=locale)

    @classmethod
    def tick(cls) -> Update:
        """The clock moved; fire what is due."""
        return cls("tick")


@dataclass(slots=True)
class Reply:
    """One outgoing message; buttons are MAX-neutral dicts {"text", "payload"}, {"text", "url"} or
    {"text", "request": "contact" | "location"}."""

    text: str
    buttons: list[list[dict[str, str]]] = field(default_factory=list)
    # MAX's markup of the text ("markdown" | "html"), None for plain; the picture as a link or an upload id.
    format: str | None = None
    image: str | None = None
    upload: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used by the simulator and the timeline; markup and picture only when set."""
        out: dict[str, Any] = {"text": self.text, "buttons": self.buttons}
        if self.format is not None:
            out["format"] = self.format
        if self.image is not None:
            out["image"] = self.image
        if self.upload is not None:
            out["upload"] = self.upload
        return out


@dataclass(slots=True)
class StepResult:
    """What one update did.

    `dialog` is None when there is no dialog afterwards (cancelled, final state reached, or never opened).
    `events` say what the turn did, in order (`flows.events`): the runtime's commit is made of them.
    `transition` is the id of the transition that fired, or None. `reason` is a sentence saying why.
    `outcome` is a short machine word: opened, command:<name>, transition, input_invalid, fallback,
    ignored, reminder, completed.
    `completed` holds the final dialog (state and data) when a final state ended the dialog.
    `dropped` counts the messages left unsent past the per-update limit (flows.limits.MAX_REPLIES).
    """

    dialog: Dialog | None
    replies: list[Reply] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    transition: str | None = None
    reason: str = ""
    outcome: str = "ignored"
    completed: Dialog | None = None
    # False when the update never reached a dialog (so idle clocks were not touched).
    touched: bool = True
    dropped: int = 0

    @property
    def effects(self) -> list[ActionQueued]:
        """The actions to run after the dialog is saved (`ActionQueued` events), in order."""
        from flows.events import ActionQueued  # flows.events builds on this module's Reply

        return [event for event in self.events if event.__class__ is ActionQueued]
