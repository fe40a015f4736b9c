"""Service refusals as sentences for a person: no addresses, methods or header names, in their language."""
from __future__ import annotations

import re
from typing import Any

from flows.limits import MAX_SECONDS
from server.errors import AppError
from web.i18n import N_, gettext as _

# A clause that tells an API client what to call next ("GET /api/flows lists the flows").
API_CLAUSE = re.compile(r"\b(GET|PUT|POST|PATCH|DELETE)\b|/api/|If-Match|ETag|Authorization", re.IGNORECASE)
QUOTED = re.compile(r"'([^']*)'")
# Field notes whose figure is the service's constant ("at most 500 characters"): one catalogue entry each.
COUNTED = re.compile(r"^at most (\d+) characters$")


def without_api_words(message: str) -> str:
    """`message` with the clauses meant for API clients dropped (the sentence before them stays)."""
    parts = [p for p in re.split(r";\s+|\.\s+(?=[A-Z])", message) if p and not API_CLAUSE.search(p)]
    text = "; ".join(p.rstrip(".") for p in parts)
    return (text + ".") if text else _("That did not work.")


def human_message(exc: AppError) -> str:
    """What the designer shows for a service's refusal."""
    names = QUOTED.findall(exc.message)
    name = names[0] if names else ""
    if exc.code == "flow_exists":
        return _("A flow with the id %(id)s already exists.") % {"id": name}
    if exc.code == "bot_exists":
        return _("A bot with the id %(id)s already exists.") % {"id": name}
    if exc.code == "not_found" and exc.message.startswith("There is no flow"):
        return _("There is no flow %(id)s; it may have been deleted.") % {"id": name}
    if exc.code == "not_found" and exc.message.startswith("There is no bot"):
        return _("There is no bot %(id)s; it may have been deleted.") % {"id": name}
    if exc.code == "revision_mismatch":
        return _("Someone else saved this flow meanwhile; reload to see their version.")
    if exc.words is not None:  # the service's own sentence beats a generic one
        template, values = exc.words
        return _(template) % values
    if exc.code == "invalid_request" and any(isinstance(d, dict) and d.get("path") for d in exc.details):
        return _("Check the marked fields.")
    if exc.code == "no_version":
        return _("This flow has no version yet: freeze the draft first.")
    return _(without_api_words(exc.message))


def human_detail(detail: dict[str, Any]) -> dict[str, Any]:
    """One of a refusal's field problems, its words in the reader's language where the service marked them."""
    if detail.get("test") is not None and detail.get("differs") and not detail.get("error"):
        return {**detail, "message": failed_step(detail)}
    message = detail.get("message")
    if not isinstance(message, str) or not message:
        return detail
    counted = COUNTED.match(message)
    if counted:
        return {**detail, "message": _("at most %(n)s characters") % {"n": counted.group(1)}}
    return {**detail, "message": loader_sentence(message)}


# The loader's complaints a form can draw (its English wording, flows/format.py), said in the reader's language.
LOADER_SENTENCES = [
    (re.compile(rf"^must be at most {MAX_SECONDS:,} seconds \(a year\), not "),
     N_("at most a year (31,536,000 seconds); enter a smaller number")),
    (re.compile(r"^(?P<value>\S+) is too large: numbers in a flow are at most 2\^53"),
     N_("%(value)s is too large: a number in a flow is at most 9,007,199,254,740,992 in magnitude")),
    (re.compile(r"^the reminder \((?P<after>\S+) s\) must come before the dialog expires \(session_ttl (?P<ttl>\S+) s\)"),
     N_("the reminder (after %(after)s s) must come before the dialog expires (after %(ttl)s s); make it sooner")),
    (re.compile(r'^"(?P<key>.*)" is not a valid data key;'),
     N_("\"%(key)s\" cannot be a data name: use Latin letters, digits and _, starting with a letter or _ (e.g. "
        "phone_number)")),
    (re.compile(r'^state id "(?P<id>.*)" is not valid;'),
     N_("\"%(id)s\" cannot be a state id: use 1 to 64 characters, a lowercase Latin letter first, then lowercase "
        "letters, digits or _ (e.g. awaiting_phone)")),
    (re.compile(r'^flow id "(?P<id>.*)" is not valid;'),
     N_("\"%(id)s\" cannot be a flow id: use 1 to 64 characters, a lowercase Latin letter first, then lowercase "
        "letters, digits, _ or -")),
]


def loader_sentence(message: str) -> str:
    """A loader complaint in the reader's language: a known shape, else the catalogue's entry for it."""
    for shape, template in LOADER_SENTENCES:
        found = shape.match(message)
        if found:
            return _(template) % found.groupdict()
    return _(message)


KEY_NAMES = {"replies": N_("replies"), "state": N_("state")}


def failed_step(detail: dict[str, Any]) -> str:
    """A failing saved test's first differing step, in the reader's language (the API's detail is English)."""
    expected, actual = detail.get("expected") or {}, detail.get("actual") or {}
    what = "; ".join(_("%(key)s: expected %(expected)s, got %(actual)s") % {
        "key": _(KEY_NAMES.get(key, key)), "expected": shown_value(expected.get(key)),
        "actual": shown_value(actual.get(key))} for key in detail["differs"])
    return _("step %(n)s (%(sent)s): %(what)s") % {"n": (detail.get("step") or 0) + 1,
                                                   "sent": detail.get("shown") or "", "what": what}


def shown_value(value: Any) -> str:
    """A state or a list of replies as a person reads them: «text» / «text», or a dash for none."""
    if value is None or value == []:
        return "—"
    if isinstance(value, list):
        return " / ".join(f"«{item}»" for item in value)
    return f"«{value}»"


SYNTAX = re.compile(r"^The document is not valid (JSON|YAML): .* at line (\d+), column (\d+)\.?$", re.DOTALL)


def syntax_problem(message: str) -> str:
    """A parser's refusal of a file as a sentence in the reader's language: which format and where."""
    found = SYNTAX.match(message)
    if found is None:
        return _(message)
    kind, line, column = found.groups()
    return _("This is not valid %(kind)s: look at line %(line)s, column %(column)s.") % {
        "kind": kind, "line": line, "column": column}
