"""Service refusals as sentences for a person: no addresses, methods or header names, in their language."""
from __future__ import annotations

import re
from typing import Any

from server.errors import AppError
from web.i18n import gettext as _

# A clause that tells an API client what to call next ("GET /api/flows lists the flows").
API_CLAUSE = re.compile(r"\b(GET|PUT|POST|PATCH|DELETE)\b|/api/|If-Match|ETag|Authorization", re.IGNORECASE)
QUOTED = re.compile(r"'([^']*)'")


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
    message = detail.get("message")
    return {**detail, "message": _(message)} if isinstance(message, str) and message else detail
