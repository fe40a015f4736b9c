"""The language switch: remembers the choice (a cookie, and on the signed-in user) and returns to the page."""
from __future__ import annotations

from typing import Annotated

from litestar import Request, get
from litestar.datastructures import Cookie
from litestar.params import QueryParameter
from litestar.response import Redirect
from sqlalchemy import update

from server.api.params import DbSession, PathStr
from server.auth import current_user
from server.db.models import UserRow
from web.i18n import COOKIE, LANGUAGES, ONE_YEAR
from web.pages_auth import safe_next


@get("/language/{lang:str}", include_in_schema=False)
async def switch_language(request: Request, db_session: DbSession, lang: PathStr,
                          next: Annotated[str | None, QueryParameter()] = None) -> Redirect:
    """Only a preference changes, so a link (no form, no CSRF token) is enough."""
    if lang not in LANGUAGES:
        return Redirect(safe_next(next), status_code=303)
    user = current_user(request)
    if user is not None:
        await db_session.execute(update(UserRow).where(UserRow.id == user.id).values(language=lang))
        await db_session.commit()
    cookie = Cookie(key=COOKIE, value=lang, max_age=ONE_YEAR, path="/", samesite="lax", httponly=True)
    return Redirect(safe_next(next), status_code=303, cookies=[cookie])


ROUTES = [switch_language]
