"""Timeline records: one per handled update (what came in, what fired and why, what was sent)."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from flows.inputs import shown
from flows.masking import MASK, Masking, Memo, mask_text, replacer, secrets_of
from flows.model import Flow
from flows.dialog import StepResult, Update


def describe(update: Update) -> str:
    """The update as a person would read it."""
    if update.kind == "message":
        parts = [update.text] if update.text else []
        parts += [f"[{a.get('type', 'attachment')}]" for a in update.attachments]
        return " ".join(parts)
    if update.kind == "button":
        return update.payload or ""
    if update.kind == "bot_started":
        return update.start_payload or ""
    if update.kind == "event":
        payload = json.dumps(update.event_payload, ensure_ascii=False) if update.event_payload else ""
        return f"{update.name} {payload}".strip()
    return ""


def snapshot(dialog: dict[str, Any] | None) -> dict[str, Any] | None:
    """The part of a stored dialog the inspection routes show."""
    if dialog is None:
        return None
    return {key: dialog.get(key) for key in ("flow", "version", "state", "data", "history")}


def brief(now: float, update: Update, before: str | None, result: StepResult,
          after: dict[str, Any] | None) -> list[Any]:
    """An unmasked turn's record as one flat list, without the dialog snapshot: `expand` with the dialog
    as saved makes the record. A webhook turn stores this (a third of the work of building the record,
    which was a tenth of a turn); readers and the timeline mover expand it.

    The list: [t, kind, state before, update text, step kind, state, transition, reason, completed state,
    completed data as JSON, replies...]: a plain reply as its text, one with markup or a picture as
    {"text", "format", "image", "upload"} (only the keys it sets).
    """
    state = after["state"] if after is not None else None
    completed = result.completed
    if state is None and completed is not None:
        state = completed.state
    entry = [now, "timer" if update.kind == "tick" else update.kind, before, describe(update),
             "transition" if result.transition else result.outcome, state, result.transition, result.reason,
             None, None]
    if completed is not None:
        entry[8], entry[9] = completed.state, json.dumps(completed.data, ensure_ascii=False, default=str)
    entry += [reply.text if reply.format is None and reply.image is None and reply.upload is None
              else reply.to_dict() | {"buttons": None} for reply in result.replies]
    return entry


def _reply(reply: str | dict[str, Any], state: str | None) -> list[Any]:
    """A reply's timeline entry: [kind, state, transition, text], then its look when it has one."""
    if isinstance(reply, str):
        return ["reply", state, None, reply]
    look = {key: reply[key] for key in LOOK if reply.get(key) is not None}
    return ["reply", state, None, reply.get("text", ""), look]


# What a reply may carry besides its text: MAX's markup and a picture.
LOOK = ("format", "image", "upload")


def expand(entry: list[Any], snap: dict[str, Any] | None) -> dict[str, Any]:
    """The record a `brief` stands for, given the snapshot of the dialog it saved (`snapshot`)."""
    now, kind, before, text, step_kind, state, transition, reason, done_state, done_data, *replies = entry
    entries: list[list[Any]] = [[kind, before, None, text], [step_kind, state, transition, reason]]
    entries.extend(_reply(reply, state) for reply in replies)
    if done_state is not None:
        entries.append(["completed", done_state, None, done_data])
    return {"t": now, "e": entries, "s": snap}


def as_record(saved: dict[str, Any] | list[Any], dialog: dict[str, Any] | None) -> dict[str, Any]:
    """What a turn saved as its timeline (a record, or a brief beside the saved dialog) as a record."""
    return saved if isinstance(saved, dict) else expand(saved, snapshot(dialog))


def record(now: float, update: Update, before: str | None, result: StepResult,
           after: dict[str, Any] | None, *, masking: Masking | None = None,
           flow: Flow | None = None, before_data: dict[str, Any] | None = None) -> dict[str, Any]:
    """The timeline record of one turn; entries are [kind, state, transition, text].

    With `masking`, the bot's masked values never reach the record (`flows.masking` says how they read).
    """
    rec = expand(brief(now, update, before, result, after), snapshot(after))
    if masking:
        completed = result.completed.data if result.completed is not None else None
        _mask(rec, masking, flow, before if update.kind == "message" else None, update, before_data, completed)
    return rec


def _mask(rec: dict[str, Any], masking: Masking, flow: Flow | None, answering: str | None, update: Update,
          before_data: dict[str, Any] | None, completed: dict[str, Any] | None) -> None:
    """Mask, in place, the values `masking` hides: in the snapshot, the final data, and every text."""
    keys, memo = masking.masked_keys(flow), Memo()
    snap = rec["s"]
    secrets = secrets_of(before_data, keys, memo) + secrets_of(completed, keys, memo)
    if snap is not None:
        secrets += secrets_of(snap.get("data"), keys, memo)
        rec["s"] = {**snap, "data": masking.data(snap.get("data"), keys, memo)}
    entries = rec["e"]
    kind = masking.input_kind(flow, answering)
    if kind is not None:  # the user's answer to a masked input: hidden whole, valid or not
        rec["m"] = 1  # what the user wrote is not known any more: replays stop before this turn
        typed = (update.text or "").strip()
        entries[0][3] = mask_text(typed, kind) if typed and kind != "contact" else MASK
        if typed:
            secrets += [(typed, entries[0][3]), (shown(update.text, update.attachments), entries[0][3])]
    hide = replacer(secrets)
    for entry in entries[1:] if kind is not None else entries:
        if entry[0] == "completed" and completed is not None:
            entry[3] = json.dumps(masking.data(completed, keys, memo), ensure_ascii=False, default=str)
        else:
            entry[3] = hide(entry[3])


def note(now: float, kind: str, state: str | None, text: str, after: dict[str, Any] | None,
         masking: Masking | None = None, flow: Flow | None = None) -> dict[str, Any]:
    """A record that is not an update (a publish dropped or migrated the dialog)."""
    rec: dict[str, Any] = {"t": now, "e": [[kind, state, None, text]], "s": snapshot(after)}
    if masking and rec["s"] is not None:
        keys = masking.masked_keys(flow)
        rec["s"]["data"] = masking.data(rec["s"].get("data"), keys)
    return rec


def iso(ts: float) -> str:
    """Unix seconds as ISO 8601 UTC with milliseconds."""
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def entries(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records flattened into the entries the API shows, oldest first."""
    out = []
    for rec in records:
        when = iso(rec["t"])
        for kind, state, transition, text, *look in rec["e"]:
            out.append({"time": when, "kind": kind, "state": state, "transition": transition, "text": text,
                        **(look[0] if look else {})})
    return out


def state_at(records: list[dict[str, Any]], index: int) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """(entry, dialog snapshot) as of entry `index`: an update entry sees the dialog before its turn."""
    position = 0
    previous: dict[str, Any] | None = None
    for rec in records:
        count = len(rec["e"])
        if index < position + count:
            offset = index - position
            kind, state, transition, text, *look = rec["e"][offset]
            entry = {"time": iso(rec["t"]), "kind": kind, "state": state, "transition": transition, "text": text,
                     **(look[0] if look else {})}
            is_update = offset == 0 and len(rec["e"]) > 1
            return entry, previous if is_update else rec["s"]
        position += count
        previous = rec["s"]
    return None
