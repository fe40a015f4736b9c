"""A dialog's timeline as a transcript: who said what, what fired and why, and where the simulator can start."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from babel.dates import format_datetime

from server.runtime import timeline
from web.i18n import N_, current_language

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
        for offset, (kind, state, transition, text) in enumerate(rec["e"]):
            is_update = offset == 0 and len(rec["e"]) > 1
            snap = previous if is_update else rec["s"]
            shown = collected(text) if kind == "completed" else text or ""
            out.append(Line(len(out), when, kind, KIND_WORDS.get(kind, N_("other")), side_of(kind), state,
                            transition, shown, snap is not None))
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
