"""Login and logout with the browser session cookie (CSRF-checked like every form post)."""
from __future__ import annotations

from typing import Annotated

from litestar import Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template
from sqlalchemy.ext.asyncio import AsyncSession

from server.auth import current_user, login_session, logout_session
from server.services.users import authenticate
from web.pages import render

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]


def safe_next(target: str | None) -> str:
    """Only local paths: a login link must not send the user to another site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/flows"
    return target


@get("/login", include_in_schema=False)
async def login_page(request: Request, next: str | None = None) -> Template | Redirect:
    if current_user(request) is not None:
        return Redirect(safe_next(next), status_code=303)
    return render(request, "login.html", next=safe_next(next), username="", error=None)


@post("/login", include_in_schema=False)
async def login(request: Request, db_session: AsyncSession, data: Form) -> Template | Redirect:
    username = (data.get("username") or "").strip()
    user = await authenticate(db_session, username, data.get("password") or "")
    if user is None:
        return render(request, "login.html", status=401, next=safe_next(data.get("next")), username=username,
                      error="Wrong username or password.")
    login_session(request, user)
    return Redirect(safe_next(data.get("next")), status_code=303)


@post("/logout", include_in_schema=False)
async def logout(request: Request) -> Redirect:
    logout_session(request)
    return Redirect("/login", status_code=303)


ROUTES = [login_page, login, logout]
