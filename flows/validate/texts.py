"""Checks on the static texts the bot sends, measured as written (before rendering)."""
from __future__ import annotations

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
    for state in flow.states:
        at = (state.id,)
        for number, message in enumerate(state.say, 1):
            where = f'Message {number} of state "{state.id}"'
            if len(message.text) > MESSAGE_LIMIT:
                found.append(_text(where, at, message.text))
            if message.buttons:
                found.extend(_buttons(where, at, message.buttons))
        error = state.input.error if state.input is not None else None
        if error is not None and len(error) > MESSAGE_LIMIT:
            found.append(_text(f'The input error text of state "{state.id}"', at, error))
    if len(flow.settings.fallback) > MESSAGE_LIMIT:
        found.append(_text("The fallback text", (), flow.settings.fallback))
    for name in COMMANDS:
        command = flow.command(name)
        if command is not None and command.reply is not None and len(command.reply) > MESSAGE_LIMIT:
            found.append(_text(f'The reply of the "{name}" command', (), command.reply))
    reminder = flow.settings.reminder
    if reminder is not None:
        if len(reminder.text) > MESSAGE_LIMIT:
            found.append(_text("The reminder", (), reminder.text))
        found.extend(_buttons("The reminder", (), reminder.buttons))
    return found


def _text(where: str, states: tuple[str, ...], text: str) -> Issue:
    return issue("message_too_long",
                 f"{where} is {len(text)} characters; the limit is {MESSAGE_LIMIT}. Shorten it or split it"
                 " into several messages.",
                 states=states)


def _buttons(where: str, states: tuple[str, ...], rows: tuple[tuple[Button, ...], ...]) -> list[Issue]:
    found = []
    for row in rows:
        for button in row:
            long_text = len(button.text) > BUTTON_TEXT_LIMIT
            long_payload = button.payload is not None and len(button.payload) > PAYLOAD_LIMIT
            if not long_text and not long_payload:
                continue
            label = button.text if len(button.text) <= 30 else button.text[:27] + "..."
            if long_text:
                found.append(issue("message_too_long",
                                   f'{where}, button "{label}", has a button text of {len(button.text)}'
                                   f" characters; the limit is {BUTTON_TEXT_LIMIT}. Shorten it.",
                                   states=states))
            if long_payload:
                found.append(issue("message_too_long",
                                   f'{where}, button "{label}", has a payload of {len(button.payload or "")}'
                                   f" characters; the limit is {PAYLOAD_LIMIT}. Shorten it.",
                                   states=states))
    return found
