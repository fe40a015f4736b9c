"""Helpers for engine tests: small flows from dicts, a dialog driver, and random update sequences."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from flows.engine import step
from flows.load import load
from flows.model import Flow
from flows.dialog import Dialog, StepResult, Update

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def example(name: str) -> Flow:
    """A flow from examples/<name>.json."""
    return load(json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8")))


def flow_of(states: list[dict[str, Any]], transitions: list[dict[str, Any]] | None = None,
            **top: Any) -> Flow:
    """A small flow document loaded through the real loader; `start` defaults to the first state."""
    doc: dict[str, Any] = {"format": "botflow/v1", "id": top.pop("id", "t"), "title": "T",
                           "start": top.pop("start", states[0]["id"]), "states": states,
                           "transitions": transitions or []}
    doc.update(top)
    return load(doc)


class Talk:
    """Drives one user's dialog through step(), keeping the session and a clock."""

    def __init__(self, flow: Flow, now: float = 1000.0, latest: Flow | None = None) -> None:
        self.flow = flow
        self.latest = latest
        self.dialog: Dialog | None = None
        self.now = now
        self.last: StepResult | None = None

    def running_on(self) -> Flow:
        """The flow version the current dialog runs on (the given flow when there is none)."""
        s = self.dialog
        if s is not None and self.latest is not None and (s.flow, s.version) == (self.latest.id, self.latest.version):
            return self.latest
        return self.flow

    def send(self, update: Update | str, *, wait: float = 1.0) -> StepResult:
        """Advance the clock by `wait` seconds and apply one update (a str is a text message)."""
        if isinstance(update, str):
            update = Update.message(update)
        self.now += wait
        before = self.dialog
        snapshot = before.to_dict() if before is not None else None
        result = step(self.running_on(), before, update, self.now, latest=self.latest)
        # step() is pure: the session it was given never changes.
        if before is not None:
            assert before.to_dict() == snapshot
        self.dialog = result.dialog
        self.last = result
        return result

    def texts(self) -> list[str]:
        """Texts of the last replies."""
        return [r.text for r in self.last.replies] if self.last else []

    @property
    def state(self) -> str | None:
        """The current state id, or None without a dialog."""
        return self.dialog.state if self.dialog else None

    @property
    def data(self) -> dict[str, Any]:
        """The collected data ({} without a dialog)."""
        return self.dialog.data if self.dialog else {}


def texts(result: StepResult) -> list[str]:
    """Texts of a result's replies."""
    return [r.text for r in result.replies]


ATTACHMENTS = st.sampled_from([
    {"type": "image", "payload": {"url": "https://example.org/a.png"}},
    {"type": "file", "payload": {"url": "https://example.org/a.pdf"}},
    {"type": "contact", "payload": {"vcf_info": "BEGIN:VCARD"}},
    {"type": "location", "latitude": 55.75, "longitude": 37.61},
    {"type": "sticker", "payload": {"code": "x"}},
])
TEXTS = st.one_of(
    st.sampled_from(["/start", "/cancel", "/back", "/help", "назад", "back", "стоп", "меню", "да", "нет",
                     "yes", "no", "ok", "1", "x", "+79991234567", "8 (912) 345-67-89", "a@b.ru", "12,5",
                     "-3", "31.12.2024", "2024-02-30", "ABC123", "12345", "Далее", ""]),
    st.text(max_size=12),
)


def _words(doc: dict[str, Any]) -> list[str]:
    """Payloads, match words and choices the document mentions, so presses and texts hit something."""
    found: list[str] = []
    for state in doc.get("states", []):
        for message in state.get("say", []) or []:
            for row in message.get("buttons", []) or []:
                found.extend(b["payload"] for b in row if "payload" in b)
        found.extend((state.get("input") or {}).get("choices", []) or [])
    for tr in doc.get("transitions", []):
        if "payload" in tr:
            found.append(tr["payload"])
        found.extend(tr.get("match", []) or [])
    reminder = (doc.get("settings") or {}).get("reminder") or {}
    for row in reminder.get("buttons", []) or []:
        found.extend(b["payload"] for b in row if "payload" in b)
    return found or ["x"]


_EVENTS = st.builds(
    Update.event, st.sampled_from(["paid", "operator_reply", "cancelled", "other"]),
    st.dictionaries(st.sampled_from(["amount", "status", "name"]),
                    st.one_of(st.integers(-5, 5), st.sampled_from(["ok", "fail"])), max_size=2))
_FIXED_UPDATES = st.one_of(
    st.builds(Update.message, TEXTS),
    st.builds(Update.button, TEXTS),
    st.builds(lambda a, t: Update.message(t, [a]), ATTACHMENTS, st.one_of(st.none(), TEXTS)),
    _EVENTS,
    st.builds(Update.started, st.sampled_from([None, "", "promo"])),
    st.just(Update.tick()),
)
_WAITS = st.one_of(st.just(1.0), st.floats(0, 5000, allow_nan=False))


@st.composite
def update_sequences(draw: st.DrawFn, doc: dict[str, Any], max_size: int = 15) -> list[tuple[float, Update]]:
    """(wait seconds, update) pairs mixing texts, presses, attachments, events, starts and ticks."""
    words = st.sampled_from(_words(doc))
    # Half the updates use the document's own words so that triggers, choices and buttons really fire.
    update = st.one_of(st.builds(Update.message, words), st.builds(Update.button, words), _FIXED_UPDATES,
                       _FIXED_UPDATES)
    return draw(st.lists(st.tuples(_WAITS, update), max_size=max_size))
