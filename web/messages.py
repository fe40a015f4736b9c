"""Service refusals as sentences for a person: no addresses, methods or header names, in their language."""
from __future__ import annotations

import re
from typing import Any

from flows.errors import DocumentSyntaxError
from flows.limits import MAX_SECONDS
from server.errors import AppError
from web.i18n import N_, gettext as _

# A clause that tells an API client what to call next ("GET /api/flows lists the flows").
API_CLAUSE = re.compile(r"\b(GET|PUT|POST|PATCH|DELETE)\b|/api/|If-Match|ETag|Authorization", re.IGNORECASE)


def without_api_words(message: str) -> str:
    """`message` with the clauses meant for API clients dropped (the sentence before them stays)."""
    parts = [p for p in re.split(r";\s+|\.\s+(?=[A-Z])", message) if p and not API_CLAUSE.search(p)]
    text = "; ".join(p.rstrip(".") for p in parts)
    return (text + ".") if text else _("That did not work.")


def human_message(exc: AppError) -> str:
    """What the designer shows for a service's refusal."""
    flow, bot = exc.params.get("flow"), exc.params.get("bot")
    if exc.code == "flow_exists" and flow:
        return _("A flow with the id %(id)s already exists.") % {"id": flow}
    if exc.code == "bot_exists" and bot:
        return _("A bot with the id %(id)s already exists.") % {"id": bot}
    if exc.code == "not_found" and flow:
        return _("There is no flow %(id)s; it may have been deleted.") % {"id": flow}
    if exc.code == "not_found" and bot:
        return _("There is no bot %(id)s; it may have been deleted.") % {"id": bot}
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
    params = detail.get("params")
    if detail.get("code") == "too_long" and isinstance(params, dict) and params.get("max") is not None:
        return {**detail, "message": _("at most %(n)s characters") % {"n": params["max"]}}
    return {**detail, "message": loader_words(detail)}


# The loader's complaints by the code its details carry (flows/said.py), in the reader's language; the English
# `message` stays the API's. A detail without a code, or with one not listed here, falls back to the catalogue.
LOADER_WORDS: dict[str, str] = {
    "number_too_large": N_("%(value)s is too large: a number in a flow is at most 9,007,199,254,740,992 in "
                           "magnitude"),
    "number_above_maximum": N_("at most %(maximum)s; enter a smaller number"),
    "reminder_after_expiry": N_("the reminder (after %(after)s s) must come before the dialog expires (after "
                                "%(ttl)s s); make it sooner"),
    "bad_data_key": N_("\"%(key)s\" cannot be a data name: use Latin letters, digits and _, starting with a letter "
                       "or _ (e.g. phone_number)"),
    "bad_state_id": N_("\"%(id)s\" cannot be a state id: use 1 to 64 characters, a lowercase Latin letter first, "
                       "then lowercase letters, digits or _ (e.g. awaiting_phone)"),
    "html_unknown_tag": N_("MAX does not show the tag %(tag)s; use only <b>, <i>, <u>, <s>, <code>, <pre>, <a>, "
                           "<mark>, <blockquote> and <h1>, or write &lt; for a literal <"),
    "html_never_closed": N_("<%(tag)s> is opened but never closed; add </%(tag)s>"),
    "html_never_opened": N_("%(tag)s closes a tag that was never opened; remove it or open the tag before it"),
    "html_crossed": N_("</%(tag)s> comes while <%(open)s> is still open; close <%(open)s> first"),
    "html_bad_attribute": N_("%(tag)s cannot be shown: only <a> takes an attribute, href=\"https://...\", and no "
                             "tag closes itself"),
    "bad_picture_url": N_("MAX cannot fetch a picture from %(url)s; write an https:// address"),
    "unknown_field": N_("there is no field %(field)s here; allowed: %(allowed)s. Remove it, or start its name "
                        "with x- to keep your own data"),
    "missing_field": N_("the field %(field)s is required here"),
    "bad_flow_id": N_("\"%(id)s\" cannot be a flow id: use 1 to 64 characters, a lowercase Latin letter first, then "
                      "lowercase letters, digits, _ or -"),
}
# Bounds whose unit has its own sentence ("a year" reads better than 31,536,000).
BOUND_WORDS = {f"seconds (a year)|{MAX_SECONDS}": N_("at most a year (31,536,000 seconds); enter a smaller number")}


def loader_words(detail: dict[str, Any]) -> str:
    """A loader detail in the reader's language: said from its code and params, else the catalogue's entry."""
    code, params = detail.get("code"), detail.get("params")
    message = str(detail.get("message") or "")
    if code in LOADER_WORDS and isinstance(params, dict):
        if code == "unknown_field" and params.get("close"):
            return _("there is no field %(field)s here; did you mean %(close)s?") % {
                "field": f"«{params.get('field')}»", "close": f"«{params['close']}»"}
        if code in ("unknown_field", "missing_field"):
            params = {**params, "field": f"«{params.get('field')}»",
                      "allowed": ", ".join(f"«{name}»" for name in params.get("allowed") or [])}
        if code == "number_above_maximum":
            bound = BOUND_WORDS.get(f"{params.get('unit')}|{params.get('maximum')}")
            if bound:
                return _(bound)
            params = {**params, "maximum": f"{float(params.get('maximum') or 0):,.0f}"}
        try:
            return _(LOADER_WORDS[code]) % params
        except (KeyError, TypeError, ValueError):  # params not as this code's words expect: say the English
            return _(message)
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


def syntax_problem(exc: DocumentSyntaxError) -> str:
    """A parser's refusal of a file as a sentence in the reader's language: which format and where."""
    where = exc.params
    if exc.code == "syntax_at" and {"format", "line", "column"} <= set(where):
        return _("This is not valid %(kind)s: look at line %(line)s, column %(column)s.") % {
            "kind": where["format"], "line": where["line"], "column": where["column"]}
    return _(exc.message)
