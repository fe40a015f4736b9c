"""The language switch: remembers the choice in a cookie and returns to the page it was made on."""
from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.datastructures import Cookie
from litestar.params import QueryParameter
from litestar.response import Redirect

from server.api.params import PathStr
from web.i18n import COOKIE, LANGUAGES, ONE_YEAR
from web.pages_auth import safe_next


@get("/language/{lang:str}", include_in_schema=False)
async def switch_language(lang: PathStr, next: Annotated[str | None, QueryParameter()] = None) -> Redirect:
    """Only a cookie changes, so a link (no form, no CSRF token) is enough."""
    cookies = [Cookie(key=COOKIE, value=lang, max_age=ONE_YEAR, path="/", samesite="lax", httponly=True)] \
        if lang in LANGUAGES else []
    return Redirect(safe_next(next), status_code=303, cookies=cookies)


ROUTES = [switch_language]
