"""A dialog's timeline as a transcript: who said what, what fired and why, and where the simulator can start."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from babel.dates import format_datetime

from server.runtime import timeline
from web.i18n import N_, current_language
from web.i18n import gettext as _

USER_KINDS = {"message": N_("wrote"), "button": N_("pressed a button"), "bot_started": N_("started the bot"),
              "event": N_("event"), "timer": N_("timer")}
KIND_WORDS = {
    **USER_KINDS,
    "transition": N_("transition"), "reply": N_("bot replied"), "completed": N_("completed"),
    "dropped": N_("dropped by a publish"), "migrated": N_("moved by a publish"), "send_failed": N_("not delivered"),
    "opened": N_("dialog opened"), "fallback": N_("not understood"), "input_invalid": N_("input refused"),
    "ignored": N_("ignored"), "reminder": N_("reminder"), "command:cancel": N_("cancelled"),
    "command:restart": N_("restarted"), "command:back": N_("went back"), "command:help": N_("asked for help"),
}

# What the engine did, by the step's kind (its outcome code) and the states the record holds
# (the params): the reader's words for the engine's English `reason`, which stays in the API and the record.
EXPLANATIONS = {
    "transition": N_("A transition led from %(before)s to %(state)s."),
    "opened": N_("A dialog opened in %(state)s."),
    "fallback": N_("The bot did not understand this in %(state)s and sent its fallback text."),
    "input_invalid": N_("The answer does not fit what %(state)s asks for; the bot said so."),
    "ignored": N_("The bot had nothing to do with this update and left the dialog as it was."),
    "held": N_("A timeout in %(state)s is due but its condition does not hold; it waits for the next activity."),
    "expired": N_("The dialog had expired, so this update did not continue it."),
    "reminder": N_("The dialog waited in %(state)s for a long time; the bot sent the reminder."),
    "dropped": N_("A publish ended this dialog."),
    "migrated": N_("A publish moved this dialog to %(state)s."),
    "send_failed": N_("The bot's message was not delivered to MAX."),
    "command:cancel": N_("The user cancelled the dialog."),
    "command:restart": N_("The user started the dialog over; it is now in %(state)s."),
    "command:back": N_("The user went back to %(state)s."),
    "command:help": N_("The user asked for help; the bot sent the help text."),
}


def explanation(kind: str, state: str | None, before: str | None,
                names: dict[str, str] | None = None) -> str | None:
    """The engine's step said in the reader's language from its kind and params, or None for a kind not listed.

    States read by their titles where `names` has one (what the canvas shows), else by id.
    """
    template = EXPLANATIONS.get(kind)
    if template is None:
        return None

    def shown(name: str | None) -> str:
        return f"«{(names or {}).get(name) or name}»" if name else "—"

    return _(template) % {"state": shown(state), "before": shown(before)}


@dataclass(frozen=True, slots=True)
class Line:
    """One transcript entry; `side` is user, bot or system; `can_open`: a dialog existed at that point."""

    index: int
    time: str
    kind: str
    words: str
    side: str
    state: str | None
    transition: str | None
    text: str
    can_open: bool
    # A reply's markup and picture ({"format", "image", "upload"}, the keys it sets), drawn as MAX shows them.
    look: dict[str, str] | None = None
    # The dialog's state when the turn began (the update's own entry holds it).
    before: str | None = None

    @property
    def picture(self) -> str | None:
        """Where the reply's picture is seen: its https link, or the uploaded file."""
        if not self.look:
            return None
        if self.look.get("upload"):
            return f"/api/uploads/{self.look['upload']}"
        return self.look.get("image")

    def why(self, names: dict[str, str] | None = None) -> str | None:
        """The engine's step in the reader's words (from the kind, states and transition), when the kind has some."""
        return explanation(self.kind, self.state, self.before, names) if self.explains else None

    @property
    def explains(self) -> bool:
        """Whether the text is the engine's explanation (English), not something said or collected."""
        return self.side == "system" and self.kind != "completed"


def side_of(kind: str) -> str:
    if kind in USER_KINDS:
        return "user"
    return "bot" if kind == "reply" else "system"


def lines(records: list[dict[str, Any]]) -> list[Line]:
    """Every entry of the records, oldest first, with the rule of `timeline.state_at` for each one's dialog."""
    out: list[Line] = []
    previous: dict[str, Any] | None = None
    for rec in records:
        when = timeline.iso(rec["t"])
        before: str | None = None
        for offset, (kind, state, transition, text, *look) in enumerate(rec["e"]):
            is_update = offset == 0 and len(rec["e"]) > 1
            if is_update:
                before = state
            snap = previous if is_update else rec["s"]
            shown = collected(text) if kind == "completed" else text or ""
            out.append(Line(len(out), when, kind, KIND_WORDS.get(kind, N_("other")), side_of(kind), state,
                            transition, shown, snap is not None, look[0] if look else None, before))
        previous = rec["s"]
    return out


def collected(text: str | None) -> str:
    """A completed dialog's data (stored as JSON) as `key: value` lines."""
    try:
        data = json.loads(text or "")
    except ValueError:
        return text or ""
    if not isinstance(data, dict):
        return text or ""
    return "\n".join(f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
                     for key, value in data.items())


def clock(iso_time: str | None) -> str:
    """An entry's ISO time as date and time to the second, in the current language (UTC)."""
    if not iso_time:
        return "—"
    value = datetime.fromisoformat(iso_time.replace("Z", "+00:00"))
    return format_datetime(value, "medium", tzinfo=timezone.utc, locale=current_language())
