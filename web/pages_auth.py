"""Login and logout with the browser session cookie (CSRF-checked like every form post)."""
from __future__ import annotations

import hmac
from typing import Annotated

from litestar import Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body, QueryParameter
from litestar.response import Redirect, Template

from server.api.params import DbSession
from server.auth import current_user, login_session, logout_session
from server.errors import AppError
from server.services.users import authenticate, can_set_up, set_up_admin
from web.i18n import gettext as _
from web.pages import render

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]


def safe_next(target: str | None) -> str:
    """Only local paths: a login link must not send the user to another site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/flows"
    return target


def needs_bootstrap_token(request: Request) -> bool:
    """A configured bootstrap token guards the first-run form, so a public server cannot be claimed."""
    return bool(request.app.state.settings.bootstrap_token)


@get("/login", include_in_schema=False)
async def login_page(request: Request, db_session: DbSession,
                     next: Annotated[str | None, QueryParameter()] = None) -> Template | Redirect:
    if current_user(request) is not None:
        return Redirect(safe_next(next), status_code=303)
    setup = await can_set_up(db_session)
    return render(request, "login.html", next=safe_next(next), username="", error=None, setup=setup,
                  token_needed=setup and needs_bootstrap_token(request))


@post("/setup", include_in_schema=False)
async def set_up(request: Request, db_session: DbSession, data: Form) -> Template | Redirect:
    """First run: create the first admin who can log in, then log them in."""
    username = (data.get("username") or "").strip()
    password = data.get("password") or ""
    token_needed = needs_bootstrap_token(request)
    error = None
    if len(password) < 8:
        error = _("Choose a password of at least 8 characters.")
    elif token_needed and not hmac.compare_digest(
            (data.get("bootstrap_token") or "").encode(), request.app.state.settings.bootstrap_token.encode()):
        error = _("The bootstrap token is not the one this server was started with (BOTFLOW_BOOTSTRAP_TOKEN).")
    if error is None:
        try:
            user = await set_up_admin(db_session, username, password)
        except AppError as exc:
            error = exc.message
        else:
            login_session(request, user)
            return Redirect("/flows", status_code=303)
    setup = await can_set_up(db_session)
    return render(request, "login.html", status=422 if setup else 409, next="/flows", username=username,
                  error=error, setup=setup, token_needed=setup and token_needed)


@post("/login", include_in_schema=False)
async def login(request: Request, db_session: DbSession, data: Form) -> Template | Redirect:
    username = (data.get("username") or "").strip()
    user = await authenticate(db_session, username, data.get("password") or "")
    if user is None:
        return render(request, "login.html", status=401, next=safe_next(data.get("next")), username=username,
                      error=_("Wrong username or password."), setup=False, token_needed=False)
    login_session(request, user)
    return Redirect(safe_next(data.get("next")), status_code=303)


@post("/logout", include_in_schema=False)
async def logout(request: Request) -> Redirect:
    logout_session(request)
    return Redirect("/login", status_code=303)


ROUTES = [login_page, login, set_up, logout]
