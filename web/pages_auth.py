"""Login and logout with the browser session cookie (CSRF-checked like every form post)."""
from __future__ import annotations

import hmac
from typing import Annotated

from litestar import Request, Response, get, post
from litestar.enums import RequestEncodingType
from litestar.exceptions import PermissionDeniedException
from litestar.params import Body, QueryParameter
from litestar.response import Redirect, Template

from server.api.params import DbSession
from server.auth import current_user, login_session, logout_session
from server.csrf import CSRF_FAILED
from server.errors import AppError, http_exception_handler
from server.passwords import MAX_PASSWORD, MIN_PASSWORD, password_problem
from server.services.logins import TooManyAttempts
from server.services.users import authenticate, can_set_up, end_sessions, set_up_admin
from web.i18n import COOKIE, N_, choose, set_language
from web.i18n import gettext as _
from web.i18n import ngettext
from web.messages import human_message
from web.pages import problem, render, session_expired

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
# Why the login page was shown again, by the `notice` query value (never free text from the address).
NOTICES = {"expired": N_("The page was out of date (the server restarted or you logged out elsewhere); log in again.")}


def safe_next(target: str | None) -> str:
    """Only local paths: a login link must not send the user to another site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/flows"
    return target


def bootstrap_token(request: Request) -> str | None:
    """A configured bootstrap token guards the first-run form, so a public server cannot be claimed."""
    return request.app.state.settings.bootstrap_token


def client_address(request: Request) -> str | None:
    return request.client.host if request.client else None


def password_words(password: str) -> str | None:
    """Why the password cannot be used (the rule of server.passwords), in the person's language."""
    if password_problem(password) is None:
        return None
    if len(password) > MAX_PASSWORD:
        return _("Choose a password of at most %(n)s characters.") % {"n": MAX_PASSWORD}
    return _("Choose a password of at least %(n)s characters.") % {"n": MIN_PASSWORD}


def wait_words(exc: TooManyAttempts) -> str:
    minutes = max(1, -(-exc.retry_after // 60))
    return ngettext("Too many wrong passwords; try again in %(n)s minute.",
                    "Too many wrong passwords; try again in %(n)s minutes.", minutes) % {"n": minutes}


@get("/login", include_in_schema=False)
async def login_page(request: Request, db_session: DbSession,
                     next: Annotated[str | None, QueryParameter()] = None,
                     notice: Annotated[str | None, QueryParameter()] = None) -> Template | Redirect:
    if current_user(request) is not None:
        return Redirect(safe_next(next), status_code=303)
    setup = await can_set_up(db_session, bool(bootstrap_token(request)))
    return render(request, "login.html", next=safe_next(next), username="", error=_(NOTICES[notice]) if notice in NOTICES else None,
                  setup=setup, token_needed=setup and bool(bootstrap_token(request)))


@post("/setup", include_in_schema=False)
async def set_up(request: Request, db_session: DbSession, data: Form) -> Template | Redirect:
    """First run: create the first admin who can log in, then log them in."""
    username = (data.get("username") or "").strip()
    password = data.get("password") or ""
    token = bootstrap_token(request)
    error = password_words(password)
    if error is None and token and not hmac.compare_digest(
            (data.get("bootstrap_token") or "").encode(), token.encode()):
        error = _("The bootstrap token is not the one this server was started with (BOTFLOW_BOOTSTRAP_TOKEN).")
    if error is None:
        try:
            user = await set_up_admin(db_session, username, password, bool(token))
        except AppError as exc:
            error = human_message(exc)
        else:
            login_session(request, user)
            return Redirect("/flows", status_code=303)
    setup = await can_set_up(db_session, bool(token))
    return render(request, "login.html", status=422 if setup else 409, next="/flows", username=username,
                  error=error, setup=setup, token_needed=setup and bool(token))


@post("/login", include_in_schema=False)
async def login(request: Request, db_session: DbSession, data: Form) -> Template | Redirect:
    username = (data.get("username") or "").strip()
    target = safe_next(data.get("next"))
    try:
        user = await authenticate(db_session, username, data.get("password") or "", client_address(request))
    except TooManyAttempts as exc:
        return render(request, "login.html", status=429, next=target, username=username, error=wait_words(exc),
                      setup=False, token_needed=False, headers=exc.headers)
    if user is None:
        return render(request, "login.html", status=401, next=target, username=username,
                      error=_("Wrong username or password."), setup=False, token_needed=False)
    login_session(request, user)
    return Redirect(target, status_code=303)


@post("/logout", include_in_schema=False)
async def logout(request: Request, db_session: DbSession) -> Redirect:
    """End this session and every copy of the cookie (all of the user's browser sessions)."""
    user = current_user(request)
    if user is not None and request.scope.get("auth") == "session":
        await end_sessions(db_session, user.id)
    logout_session(request)
    return Redirect("/login", status_code=303)


def refused_form(request: Request, exc: PermissionDeniedException) -> Response:
    """A browser form whose CSRF token no longer matches: back to a fresh login page or a sentence, never JSON."""
    path = request.url.path
    if exc.detail != CSRF_FAILED or path.startswith(("/api", "/webhooks")):
        return http_exception_handler(request, exc)
    if path in ("/login", "/setup"):
        return Redirect("/login?notice=expired", status_code=303)
    # The CSRF check runs before the language middleware, so the language is read here.
    set_language(choose(request.cookies.get(COOKIE), request.headers.get("accept-language")))
    if request.headers.get("hx-request") == "true":
        return session_expired(request, 403, stale=True)  # a part of a page: a note linking to the login
    return problem(request, _("This page was open from before the server restarted or your session ended; "
                              "reload the page and try again."), status=403)


ROUTES = [login_page, login, set_up, logout]
