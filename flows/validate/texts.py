"""Checks on the static texts the bot sends, measured as written (before rendering)."""
from __future__ import annotations

from collections.abc import Iterator

import networkx as nx

from flows.model import BUTTON_TEXT_LIMIT, COMMANDS, MESSAGE_LIMIT, PAYLOAD_LIMIT, Button, Flow
from flows.validate.issue import Issue, issue


def check_message_too_long(flow: Flow, graph: nx.MultiDiGraph) -> list[Issue]:
    """A message text over 4000 characters, a button text over 128, a payload over 1024.

    Covers every static text: each state's `say` (texts, button texts and payloads) and input
    `error`, the fallback, the enabled commands' replies, and the reminder with its buttons. Every
    state in the document is checked, duplicates included, since an editor shows them all.
    """
    found: list[Issue] = []
    for where, states, kind, text in _texts(flow):
        limit = {"text": MESSAGE_LIMIT, "button": BUTTON_TEXT_LIMIT, "payload": PAYLOAD_LIMIT}[kind]
        if len(text) > limit:
            what = {"text": "is", "button": "has a button text of", "payload": "has a button payload of"}[kind]
            fix = "Shorten it or split it into several messages." if kind == "text" else "Shorten it."
            found.append(issue(
                "message_too_long",
                f"{where} {what} {len(text)} characters; the limit is {limit}. {fix}",
                states=states,
            ))
    return found


def _texts(flow: Flow) -> Iterator[tuple[str, tuple[str, ...], str, str]]:
    """(where, states, kind, text) for every static text; kind is text, button or payload."""
    for state in flow.states:
        at = (state.id,)
        for number, message in enumerate(state.say, 1):
            where = f'Message {number} of state "{state.id}"'
            yield where, at, "text", message.text
            yield from _buttons(where, at, message.buttons)
        if state.input is not None and state.input.error is not None:
            yield f'The input error text of state "{state.id}"', at, "text", state.input.error
    yield "The fallback text", (), "text", flow.settings.fallback
    for name in COMMANDS:
        command = flow.command(name)
        if command is not None and command.reply is not None:
            yield f'The reply of the "{name}" command', (), "text", command.reply
    reminder = flow.settings.reminder
    if reminder is not None:
        yield "The reminder", (), "text", reminder.text
        yield from _buttons("The reminder", (), reminder.buttons)


def _buttons(
    where: str, states: tuple[str, ...], rows: tuple[tuple[Button, ...], ...],
) -> Iterator[tuple[str, tuple[str, ...], str, str]]:
    for row in rows:
        for button in row:
            label = button.text if len(button.text) <= 30 else button.text[:27] + "..."
            yield f'{where}, button "{label}",', states, "button", button.text
            if button.payload is not None:
                yield f'{where}, button "{label}",', states, "payload", button.payload
