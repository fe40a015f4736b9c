"""A flow's languages: where its translatable texts sit, which one a dialog reads, and the load rules.

A text the bot sends is a string (the default language's text) or an object `{"ru": "...", "en": "..."}`;
a `choice` input's `choices` a list or an object of equal-length lists. `slots` is the one list of those
places: the loader's rules, the validator's `missing_translation`, the translation table, the gettext
files and the version diff all read it.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from flows.checks import item, join
from flows.model import COMMANDS

LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")

# (path keys from the top of the document, value, "text" | "choices")
Slot = tuple[tuple[str | int, ...], Any, str]


def choose(languages: tuple[str, ...], locale: str | None) -> str | None:
    """The dialog's language for a `user_locale` (`en-US` -> `en`): a listed primary subtag, else the default."""
    if not languages:
        return None
    if locale and locale.__class__ is str:
        primary = locale.replace("_", "-").split("-", 1)[0].strip().lower()
        if primary in languages:
            return primary
    return languages[0]


def pick(value: Any, code: str | None, default: str) -> str:
    """The text of `value` in language `code`; a missing (or empty) translation falls back to the default's."""
    if value.__class__ is str:
        return value
    text: str | None
    if code is not None:
        text = value.get(code)
        if text:
            return text
    text = value.get(default)
    if text is not None:
        return text
    for key, text in value.items():  # not even the default: any language that has it, in document order
        if text.__class__ is str and not key.startswith("x-"):
            return text
    return ""


def pick_choices(value: Any, code: str | None, default: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the entries a dialog in `code` accepts, the value each saves; empty when an entry saves itself).

    The dialog's own language comes first, then the default's entries, so a user typing the default
    language's word is understood too; either way the default's entry at that position is saved.
    """
    if value.__class__ is list:
        return tuple(value), ()
    lists = [entries for key, entries in value.items() if not key.startswith("x-") and entries.__class__ is list]
    base = value.get(default) or (lists[0] if lists else [])
    own = value.get(code) if code is not None and code != default else None
    if not own:
        return tuple(base), ()
    return tuple(own) + tuple(base), tuple(base) * 2


def _rows(rows: Any, at: tuple[str | int, ...]) -> Iterator[Slot]:
    if rows.__class__ is not list:
        return
    for r, row in enumerate(rows):
        if row.__class__ is not list:
            continue
        for c, button in enumerate(row):
            if button.__class__ is dict and "text" in button:
                yield (*at, "buttons", r, c, "text"), button["text"], "text"


def slots(doc: Any) -> Iterator[Slot]:
    """Every translatable place of a raw document, in reading order: states, then settings, then commands."""
    if doc.__class__ is not dict:
        return
    states = doc.get("states")
    for i, state in enumerate(states if states.__class__ is list else ()):
        if state.__class__ is not dict:
            continue
        say = state.get("say")
        for j, message in enumerate(say if say.__class__ is list else ()):
            if message.__class__ is not dict:
                continue
            if "text" in message:
                yield ("states", i, "say", j, "text"), message["text"], "text"
            yield from _rows(message.get("buttons"), ("states", i, "say", j))
        spec = state.get("input")
        if spec.__class__ is dict:
            if "error" in spec:
                yield ("states", i, "input", "error"), spec["error"], "text"
            if "choices" in spec:
                yield ("states", i, "input", "choices"), spec["choices"], "choices"
    settings = doc.get("settings")
    if settings.__class__ is dict:
        if "fallback" in settings:
            yield ("settings", "fallback"), settings["fallback"], "text"
        if "lost_place" in settings:
            yield ("settings", "lost_place"), settings["lost_place"], "text"
        reminder = settings.get("reminder")
        if reminder.__class__ is dict:
            if "text" in reminder:
                yield ("settings", "reminder", "text"), reminder["text"], "text"
            yield from _rows(reminder.get("buttons"), ("settings", "reminder"))
    commands = doc.get("commands")
    if commands.__class__ is dict:
        for name in COMMANDS:
            command = commands.get(name)
            if command.__class__ is dict and "reply" in command:
                yield ("commands", name, "reply"), command["reply"], "text"


def path_text(keys: tuple[str | int, ...]) -> str:
    """`states[2].say[0].text` for the keys of a slot."""
    path = ""
    for key in keys:
        path = item(path, key) if key.__class__ is int else join(path, key)
    return path


def listed(doc: dict[str, Any]) -> tuple[str, ...]:
    """The document's languages when the list is well formed, else ()."""
    languages = doc.get("languages")
    if languages.__class__ is not list or not languages:
        return ()
    if not all(code.__class__ is str and LANGUAGE_CODE.fullmatch(code) for code in languages):
        return ()
    return tuple(languages)


def _shown(languages: tuple[str, ...]) -> str:
    return ", ".join(languages)


def _rows_translated(rows: Any) -> bool:
    if rows.__class__ is not list:
        return False
    for row in rows:
        if row.__class__ is list:
            for button in row:
                if button.__class__ is dict and button.get("text").__class__ is dict:
                    return True
    return False


def _translated_anywhere(doc: dict[str, Any]) -> bool:
    """Whether any text or choices of the document is an object, or a transition switches the language: the
    quick look for the usual document in one language, without building a path per text."""
    states = doc.get("states")
    for state in states if states.__class__ is list else ():
        if state.__class__ is not dict:
            continue
        say = state.get("say")
        for message in say if say.__class__ is list else ():
            if message.__class__ is dict and (message.get("text").__class__ is dict
                                              or _rows_translated(message.get("buttons"))):
                return True
        spec = state.get("input")
        if spec.__class__ is dict and (spec.get("error").__class__ is dict or spec.get("choices").__class__ is dict):
            return True
    transitions = doc.get("transitions")
    for tr in transitions if transitions.__class__ is list else ():
        if tr.__class__ is dict and "language" in tr:
            return True
    settings = doc.get("settings")
    if settings.__class__ is dict:
        reminder = settings.get("reminder")
        if settings.get("fallback").__class__ is dict or settings.get("lost_place").__class__ is dict or (reminder.__class__ is dict and (
                reminder.get("text").__class__ is dict or _rows_translated(reminder.get("buttons")))):
            return True
    commands = doc.get("commands")
    if commands.__class__ is dict:
        for command in commands.values():
            if command.__class__ is dict and command.get("reply").__class__ is dict:
                return True
    return False


def language_problems(doc: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """The load errors across fields: text objects without `languages`, keys and switches to unlisted ones."""
    if "languages" not in doc and not _translated_anywhere(doc):
        return []  # a document in one language, the usual case
    problems: list[tuple[tuple[str | int, ...], str]] = []
    languages = doc.get("languages")
    if languages.__class__ is list:
        seen: set[str] = set()
        for index, code in enumerate(languages):
            if code.__class__ is str and code in seen:
                problems.append((("languages", index), f'the language "{code}" is listed twice; remove one'))
            seen.add(code)
    codes = listed(doc)
    has_list = "languages" in doc
    for keys, value, what in slots(doc):
        if value.__class__ is not dict:
            continue
        if not has_list:
            problems.append((keys, f'{"choices" if what == "choices" else "a text"} in several languages need{"" if what == "choices" else "s"} the flow\'s "languages" list at the top, e.g.'
                                   ' "languages": ["ru", "en"]; add it, or write this text as a plain string'))
            continue
        lengths = set()
        for key, entry in value.items():
            if key.__class__ is not str or key.startswith("x-"):
                continue
            if codes and key not in codes and LANGUAGE_CODE.fullmatch(key):  # a malformed code is the shape's
                problems.append(((*keys, key), f'"{key}" is not one of the flow\'s languages ({_shown(codes)}); add'
                                               ' it to "languages" or remove this translation'))
            if what == "choices" and entry.__class__ is list:
                lengths.add(len(entry))
        if len(lengths) > 1:
            problems.append((keys, "every language's list of choices must have the same length, since an answer"
                                   " in any language saves the default language's entry at the same position;"
                                   f" these have {', '.join(str(n) for n in sorted(lengths))} entries"))
    transitions = doc.get("transitions")
    for index, tr in enumerate(transitions if transitions.__class__ is list else ()):
        if tr.__class__ is not dict or tr.get("language").__class__ is not str:
            continue
        code = tr["language"]
        if not has_list:
            problems.append((("transitions", index, "language"),
                             'switches the dialog\'s language, but the flow lists no "languages"; add the list at'
                             ' the top, e.g. "languages": ["ru", "en"]'))
        elif codes and code not in codes:
            problems.append((("transitions", index, "language"),
                             f'"{code}" is not one of the flow\'s languages ({_shown(codes)}); switch to a listed'
                             " one or add it to \"languages\""))
    return problems


def missing(doc: dict[str, Any]) -> dict[str, list[tuple[str | int, ...]]]:
    """Per listed language, the keys of the texts that have no text in it (a plain string is the default's)."""
    codes = listed(doc)
    found: dict[str, list[tuple[str | int, ...]]] = {code: [] for code in codes}
    if len(codes) < 1:
        return found
    default = codes[0]
    for keys, value, _what in slots(doc):
        if value.__class__ is not dict:
            if value:  # an empty text (a picture without a caption) has nothing to translate
                for code in codes[1:]:
                    found[code].append(keys)
            continue
        for code in codes:
            entry = value.get(code)
            if entry is None or entry == "" or entry == []:
                if code == default and entry == "":
                    continue  # the default's empty text is a text (a picture without a caption)
                found[code].append(keys)
    return {code: paths for code, paths in found.items() if paths}
