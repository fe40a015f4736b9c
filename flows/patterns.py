"""Document patterns: Python `re` syntax run on RE2, so matching takes time linear in the text.

A pattern is parsed by Python's own `re` parser (so the syntax and its errors are Python's), refused
when it uses what a linear-time engine cannot do (backreferences, lookaround, atomic groups,
possessive repeats, conditionals), and written out again as an RE2 pattern in which `\\d`, `\\w` and
`\\s` keep their Python (Unicode) meaning; RE2's own classes are ASCII-only.
"""
from __future__ import annotations

import importlib
import re
import sys
from functools import lru_cache
from typing import Any, Protocol

import re2

# The parser Python's `re` uses: private and without stubs, but the very syntax the flow format promises.
_c: Any = importlib.import_module("re._constants")
_p: Any = importlib.import_module("re._parser")

__all__ = ["Pattern", "compile_pattern", "occurs", "pattern_problem", "search"]


class Pattern(Protocol):
    """What callers use of a compiled pattern."""

    def search(self, text: str | bytes) -> Any: ...


class PatternError(ValueError):
    """The pattern is not in the accepted syntax; the message says why in a sentence."""


_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is the caller's error to report, not a log line
_OPTIONS.never_capture = True  # only "does it match" is ever asked

# Python's Unicode whitespace (what `\s` matches in a str pattern), as RE2 class items.
_SPACE = r"\t\n\x0b\f\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_WORD = r"\p{L}\p{N}_"
_DIGIT = r"\p{Nd}"
_ASCII_SPACE = r"\t\n\x0b\f\r "
_ASCII = {"DIGIT": "0-9", "WORD": "0-9A-Za-z_", "SPACE": _ASCII_SPACE}
_UNICODE = {"DIGIT": _DIGIT, "WORD": _WORD, "SPACE": _SPACE}

_REFUSED = {
    "GROUPREF": "a backreference (\\1 or (?P=name))",
    "GROUPREF_EXISTS": "a conditional group ((?(1)...))",
    "ASSERT": "a lookahead or lookbehind ((?=...), (?<=...))",
    "ASSERT_NOT": "a negative lookahead or lookbehind ((?!...), (?<!...))",
    "ATOMIC_GROUP": "an atomic group ((?>...))",
    "POSSESSIVE_REPEAT": "a possessive repeat (*+, ++, ?+)",
}


def _char(code: int) -> str:
    """One code point as an RE2 literal that means itself anywhere, inside a class too."""
    if code < 128 and chr(code).isalnum():
        return chr(code)
    return f"\\x{{{code:x}}}"


@lru_cache(maxsize=1)
def _not_word_ranges() -> str:
    """Everything Python's `\\w` does not match, as class ranges (only for `\\W` mixed into a class)."""
    ranges: list[str] = []
    start = None
    for code in range(sys.maxunicode + 1):
        word = chr(code).isalnum() or code == 0x5F
        if not word and start is None:
            start = code
        elif word and start is not None:
            ranges.append(_char(start) if start == code - 1 else f"{_char(start)}-{_char(code - 1)}")
            start = None
    if start is not None:
        ranges.append(f"{_char(start)}-{_char(sys.maxunicode)}")
    return "".join(ranges)


def _not_space_ranges() -> str:
    """Everything Python's `\\s` does not match, as class ranges."""
    spaces = sorted(code for code in range(0x3001) if chr(code).isspace())
    ranges, start = [], 0
    for code in spaces:
        if code > start:
            ranges.append(_char(start) if start == code - 1 else f"{_char(start)}-{_char(code - 1)}")
        start = code + 1
    ranges.append(f"{_char(start)}-{_char(sys.maxunicode)}")
    return "".join(ranges)


class _Writer:
    """Writes a parsed Python pattern as RE2 syntax."""

    def __init__(self, flags: int) -> None:
        self.ascii = bool(flags & re.ASCII)

    def classes(self) -> dict[str, str]:
        return _ASCII if self.ascii else _UNICODE

    def sequence(self, items: Any, start: bool = False, end: bool = False) -> str:
        """`items` written out; `start`/`end`: nothing in the pattern comes before/after them."""
        items = list(items)
        last = len(items) - 1
        out = []
        for i, (op, av) in enumerate(items):
            first, final = start and i == 0, end and i == last
            if str(op) == "AT" and str(av) == "AT_BOUNDARY" and not self.ascii:
                # RE2's \b is ASCII-only. At the very start before a word character, a Unicode boundary
                # is "no word character before", and at the very end after one "none after": a search
                # may consume that neighbour, since nothing else in the pattern looks at it.
                if first and i < last and _starts_word([items[i + 1]]):
                    out.append(f"(?:\\A|[^{_WORD}])")
                    continue
                if final and i > 0 and _ends_word([items[i - 1]]):
                    out.append(f"(?:\\z|[^{_WORD}])")
                    continue
                # Between a start anchor and a word character, or a word character and an end anchor,
                # there is always a boundary.
                if 0 < i < last and _anchor(items[i - 1], _STARTS) and _starts_word([items[i + 1]]):
                    continue
                if 0 < i < last and _anchor(items[i + 1], _ENDS) and _ends_word([items[i - 1]]):
                    continue
            name = str(op)
            if name == "BRANCH" and (first or final):
                out.append("(?:" + "|".join(self.sequence(branch, first, final) for branch in av[1]) + ")")
            elif name == "SUBPATTERN" and (first or final) and not (av[1] or av[2]):
                out.append(f"(?:{self.sequence(av[3], first, final)})")
            else:
                out.append(self.node(op, av))
        return "".join(out)

    def node(self, op: Any, av: Any) -> str:
        name = str(op)
        if name in _REFUSED:
            raise PatternError(f"uses {_REFUSED[name]}, which a linear-time matcher cannot run")
        if name == "LITERAL":
            return _char(av)
        if name == "NOT_LITERAL":
            return f"[^{_char(av)}]"
        if name == "ANY":
            return "."
        if name == "IN":
            return self.charset(av)
        if name == "BRANCH":
            return "(?:" + "|".join(self.sequence(branch) for branch in av[1]) + ")"
        if name == "SUBPATTERN":
            return self.group(*av)
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, item = av
            if high == _c.MAXREPEAT:
                count = {0: "*", 1: "+"}.get(low, f"{{{low},}}")
            elif (low, high) == (0, 1):
                count = "?"
            else:
                count = f"{{{low}}}" if low == high else f"{{{low},{high}}}"
            lazy = "?" if name == "MIN_REPEAT" else ""
            return f"(?:{self.sequence(item)}){count}{lazy}"
        if name == "AT":
            return self.at(str(av))
        if name == "CATEGORY":
            return self.charset([(op, av)])
        raise PatternError(f"uses {name.lower().replace('_', ' ')}, which this matcher does not support")

    def group(self, _group: Any, add: int, remove: int, items: Any) -> str:
        was = self.ascii
        if add & re.ASCII:
            self.ascii = True
        if remove & re.ASCII or add & re.UNICODE:
            self.ascii = False
        on, off = _flag_letters(add), _flag_letters(remove)
        body = self.sequence(items)
        self.ascii = was
        if on or off:
            return f"(?{on}{'-' + off if off else ''}:{body})"
        return f"(?:{body})"

    @staticmethod
    def at(where: str) -> str:
        return {"AT_BEGINNING": "^", "AT_BEGINNING_STRING": r"\A", "AT_END": "$", "AT_END_STRING": r"\z",
                "AT_BOUNDARY": r"\b", "AT_NON_BOUNDARY": r"\B"}.get(where, "")

    def charset(self, items: Any) -> str:
        negate = False
        parts: list[str] = []
        categories = [str(av) for op, av in items if str(op) == "CATEGORY"]
        if len(items) == 1 and categories and categories[0].startswith("CATEGORY_NOT_"):
            # `\W`, `\S`, `\D` alone: the complement of the positive class.
            return f"[^{self.classes()[categories[0][len('CATEGORY_NOT_'):]]}]"
        for op, av in items:
            name = str(op)
            if name == "NEGATE":
                negate = True
            elif name == "LITERAL":
                parts.append(_char(av))
            elif name == "RANGE":
                parts.append(f"{_char(av[0])}-{_char(av[1])}")
            elif name == "CATEGORY":
                parts.append(self.category(str(av)))
            else:
                raise PatternError(f"uses {name.lower()} inside brackets, which this matcher does not support")
        return f"[{'^' if negate else ''}{''.join(parts)}]"

    def category(self, name: str) -> str:
        kind = name[len("CATEGORY_"):]
        if not kind.startswith("NOT_"):
            return self.classes()[kind]
        kind = kind[len("NOT_"):]
        if kind == "DIGIT":
            return r"\P{Nd}" if not self.ascii else r"\x00-/:-\x{10ffff}"
        if self.ascii:
            raise PatternError(f"mixes \\{kind[0]} with other items inside brackets under the ASCII flag;"
                               " list the characters instead")
        return _not_space_ranges() if kind == "SPACE" else _not_word_ranges()


_STARTS = ("AT_BEGINNING", "AT_BEGINNING_STRING")
_ENDS = ("AT_END", "AT_END_STRING")


def _anchor(entry: Any, kinds: tuple[str, ...]) -> bool:
    return str(entry[0]) == "AT" and str(entry[1]) in kinds


def _word_char(code: int) -> bool:
    return chr(code).isalnum() or code == 0x5F


def _word_set(items: Any) -> bool:
    """Whether a bracket (IN) item list surely matches a word character only."""
    for op, av in items:
        name = str(op)
        if name == "LITERAL" and _word_char(av):
            continue
        if name == "CATEGORY" and str(av) in ("CATEGORY_WORD", "CATEGORY_DIGIT"):
            continue
        if name == "RANGE" and av[1] - av[0] < 4096 and all(_word_char(c) for c in range(av[0], av[1] + 1)):
            continue
        return False
    return bool(items)


def _word_at(items: Any, end: int) -> bool:
    """Whether whatever `items` match surely begins (end=0) or ends (end=-1) with a word character."""
    if not items:
        return False
    op, av = items[end]
    name = str(op)
    if name == "LITERAL":
        return _word_char(av)
    if name == "IN":
        return _word_set(av)
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        return av[0] >= 1 and _word_at(list(av[2]), end)
    if name == "SUBPATTERN":
        return _word_at(list(av[3]), end)
    if name == "BRANCH":
        return all(_word_at(list(branch), end) for branch in av[1])
    return False


def _starts_word(items: Any) -> bool:
    return _word_at(items, 0)


def _ends_word(items: Any) -> bool:
    return _word_at(items, -1)


def _flag_letters(flags: int) -> str:
    return "".join(letter for flag, letter in ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
                   if flags & flag)


def translate(pattern: str) -> str:
    """The RE2 pattern that matches what `pattern` matches in Python; PatternError when it cannot."""
    try:
        parsed = _p.parse(pattern, 0)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise PatternError(f"does not compile: {exc.msg}{where}") from None
    except (OverflowError, RecursionError, ValueError) as exc:
        raise PatternError(f"does not compile ({str(exc) or type(exc).__name__})") from None
    flags = parsed.state.flags
    if flags & re.LOCALE:
        raise PatternError("uses the LOCALE flag, which does not apply to text patterns")
    try:
        body = _Writer(flags).sequence(parsed, start=True, end=True)
    except RecursionError:
        raise PatternError("is nested too deeply") from None
    prefix = _flag_letters(flags)
    return f"(?{prefix}){body}" if prefix else body


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> tuple[Pattern | None, str | None]:
    try:
        return re2.compile(translate(pattern), _OPTIONS), None
    except PatternError as exc:
        return None, str(exc)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        return None, f"is refused by the matcher ({detail or 'too large or too complex'})"


def pattern_problem(pattern: str) -> str | None:
    """Why a document pattern is refused, as a phrase, or None when it is fine."""
    return _compiled(pattern)[1]


def compile_pattern(pattern: str) -> Pattern | None:
    """The compiled document pattern, or None when it is refused (a load error elsewhere)."""
    if not isinstance(pattern, str):
        return None
    return _compiled(pattern)[0]


def occurs(compiled: Pattern, text: str) -> bool:
    """Whether the compiled pattern occurs anywhere in `text`."""
    # Its UTF-8 bytes, which is what the matcher reads either way: given a str, the re2 wrapper also maps
    # every offset back to characters, which costs more than the match itself.
    return compiled.search(text.encode()) is not None


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` occurs anywhere in the trimmed `text`; a refused pattern matches nothing."""
    compiled = compile_pattern(pattern)
    return compiled is not None and occurs(compiled, text.strip())
