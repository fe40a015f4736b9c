"""Checks on the static texts the bot sends, measured as written (before rendering)."""
from __future__ import annotations

from typing import Any

from flows.languages import missing, path_text, slots
from flows.build import localized
from flows.markup import looks_marked_up
from flows.model import BUTTON_TEXT_LIMIT, COMMANDS, MESSAGE_LIMIT, PAYLOAD_LIMIT, Button, Flow
from flows.validate.graph import FlowGraph
from flows.validate.issue import Issue, issue, names, plural


def check_message_too_long(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A message text over 4000 characters, a button text over 128, a payload over 1024.

    Covers every static text: each state's `say` (texts, button texts and payloads) and input
    `error`, the fallback, the enabled commands' replies, and the reminder with its buttons. Every
    state in the document is checked, duplicates included, since an editor shows them all. The texts
    of the other languages are measured too.
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
    if flow.languages:
        found.extend(_translations_too_long(flow))
    return found


def _text(where: str, states: tuple[str, ...], text: str) -> Issue:
    return issue("message_too_long",
                 f"{where} is {len(text)} characters; the limit is {MESSAGE_LIMIT}. Shorten it or split it"
                 " into several messages.",
                 states=states, part="text", length=len(text), limit=MESSAGE_LIMIT)


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
                                   states=states, part="button_text", button=label, length=len(button.text),
                                   limit=BUTTON_TEXT_LIMIT))
            if long_payload:
                found.append(issue("message_too_long",
                                   f'{where}, button "{label}", has a payload of {len(button.payload or "")}'
                                   f" characters; the limit is {PAYLOAD_LIMIT}. Shorten it.",
                                   states=states, part="payload", button=label,
                                   length=len(button.payload or ""), limit=PAYLOAD_LIMIT))
    return found


def check_unformatted_markup(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A plain message (no `format`) whose text reads as markup: MAX would show its markers as typed."""
    found: list[Issue] = []
    # Every language's text is sent with the message's format.
    variants = [flow, *[localized(flow, code) for code in flow.languages if code != flow.language]]
    for index, state in enumerate(flow.states):
        for number, message in enumerate(state.say, 1):
            if message.format is not None:
                continue
            written = [v.states[index].say[number - 1].text for v in variants
                       if index < len(v.states) and number <= len(v.states[index].say)]
            if any(looks_marked_up(text) for text in written):
                found.append(issue("unformatted_markup",
                                   f'Message {number} of state "{state.id}" looks like markdown or html but has'
                                   ' no format, so MAX shows its markers as typed. Set "format" to "markdown" or'
                                   ' "html", or remove the markers.', states=(state.id,),
                                   state=state.id, number=number))
    return found


def check_missing_translation(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """One warning per listed language some texts lack, naming their paths (the default's text is sent)."""
    doc = flow.document
    found: list[Issue] = []
    default = flow.languages[0] if flow.languages else ""
    for code, places in missing(doc).items():
        paths = [path_text(keys) for keys in places]
        instead = (f"the {default} text is sent instead" if code != default
                   else "a dialog in it gets another language's text")
        found.append(issue("missing_translation",
                           f'{plural(len(paths), "text")} {"has" if len(paths) == 1 else "have"} no "{code}"'
                           f" translation: {names(paths, 10)}; {instead}. Translate them in the translation table.",
                           states=_states_of(doc, places), language=code, count=len(paths)))
    return found


def _states_of(doc: dict[str, Any], places: list[tuple[str | int, ...]]) -> list[str]:
    states = doc.get("states") or []
    return [states[keys[1]]["id"] for keys in places if keys[0] == "states"]  # type: ignore[index]


def _translations_too_long(flow: Flow) -> list[Issue]:
    """A translation over the limit of its place (4000 characters for a message, 128 for a button)."""
    doc = flow.document
    found: list[Issue] = []
    default = flow.languages[0] if flow.languages else None
    for keys, value, what in slots(doc):
        if what != "text" or value.__class__ is not dict:
            continue
        limit = BUTTON_TEXT_LIMIT if "buttons" in keys else MESSAGE_LIMIT
        for code, text in value.items():
            if code == default or text.__class__ is not str or len(text) <= limit:
                continue
            found.append(issue("message_too_long",
                               f'The "{code}" text at {path_text(keys)} is {len(text)} characters; the limit is'
                               f" {limit}. Shorten it.", states=_states_of(doc, [keys]),
                               part="translation", language=code, length=len(text), limit=limit))
    return found
