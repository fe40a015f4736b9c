"""What every designer page shares: rendering a page or its htmx fragment, the login gate, roles."""
from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

from litestar import Request, Response
from litestar.plugins.htmx import ClientRedirect, HTMXRequest, HTMXTemplate
from litestar.response import Redirect, Template

from server.auth import CurrentUser, current_user
from server.errors import AppError
from web.i18n import N_, role_name
from web.i18n import gettext as _
from web.messages import human_detail, human_message

ROLE_NAMES = {"editor": N_("change drafts"), "publisher": N_("freeze versions and publish"),
              "admin": N_("manage bots and people")}


def is_htmx(request: Request) -> bool:
    htmx = getattr(request, "htmx", None)
    return bool(htmx) if htmx is not None else request.headers.get("hx-request") == "true"


def render(request: Request, page: str, partial: str | None = None, *, status: int = 200,
           headers: dict[str, str] | None = None, **context: Any) -> Template:
    """The full page, or only `partial` when htmx asks; the signed-in user is always in the context."""
    context.setdefault("user", current_user(request))
    name = partial if partial and is_htmx(request) else page
    return HTMXTemplate(template_name=name, context=context, status_code=status, headers=headers or {})


def fragment(request: Request, partial: str, *, status: int = 200, headers: dict[str, str] | None = None,
             **context: Any) -> Template:
    """Only a fragment (the answer to an htmx form post)."""
    context.setdefault("user", current_user(request))
    return HTMXTemplate(template_name=partial, context=context, status_code=status, headers=headers or {})


def redirect(request: Request, to: str) -> Response:
    """Go to `to`: an htmx client redirect for htmx requests, a 303 otherwise."""
    if is_htmx(request):
        return ClientRedirect(to)
    return Redirect(to, status_code=303)


async def require_login(request: Request) -> Response | None:
    """Before every designer page: anonymous visitors go to the login page and come back after.

    A part of a page (htmx) is not navigated away from, which would drop what the person was doing: it
    says the session ended, with a link to log in and come back to the page it is part of.
    """
    if current_user(request) is not None:
        return None
    if is_htmx(request):
        return session_expired(request, 401)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return redirect(request, f"/login?next={quote(target, safe='')}")


def session_expired(request: Request, status: int, *, stale: bool = False) -> Template:
    """The note that replaces a part of a page the session no longer allows, linking back to that page."""
    target = request.url.path
    page = urlsplit(request.headers.get("hx-current-url", ""))
    if page.path.startswith("/") and not page.path.startswith("//"):
        target = page.path + (f"?{page.query}" if page.query else "")
    return HTMXTemplate(template_name="_partials/session_expired.html", status_code=status,
                        headers={"X-Botflow-Session": "expired"},
                        context={"login": f"/login?next={quote(target, safe='')}", "stale": stale, "user": None})


def user_of(request: Request) -> CurrentUser:
    user = current_user(request)
    assert user is not None  # require_login runs before every handler that calls this
    return user


def refusal(request: Request, role: str) -> Template | None:
    """A 403 fragment when the user's role is below `role`, else None."""
    user = user_of(request)
    if user.has_role(role):
        return None
    message = _("You need the %(role)s role or above to %(what)s; you are %(yours)s.") % {
        "role": role_name(role), "what": _(ROLE_NAMES.get(role, N_("do this"))), "yours": role_name(user.role)}
    return problem(request, message, status=403)


def problem(request: Request, message: str, problems: list[dict[str, Any]] | None = None,
            *, status: int = 400) -> Template:
    """An error as the page or fragment the request expects."""
    if is_htmx(request):
        return fragment(request, "_partials/problems.html", status=status, message=message, problems=problems or [])
    return render(request, "error.html", status=status, heading=_("That did not work"), message=message)


def app_error(request: Request, exc: AppError) -> Template:
    """A service's refusal (not found, conflict, invalid) shown as a page or fragment."""
    details = [human_detail(d) for d in exc.details if isinstance(d, dict)]
    return problem(request, human_message(exc), details, status=exc.status)


__all__ = ["HTMXRequest", "app_error", "fragment", "is_htmx", "problem", "redirect", "refusal", "render",
           "require_login", "user_of"]
