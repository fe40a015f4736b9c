"""The designer's languages: catalogues compiled from web/locale/*.po, the request's language, gettext."""
from __future__ import annotations

import gettext as stdlib_gettext
from contextvars import ContextVar
from datetime import datetime, timezone
from functools import lru_cache
from io import BytesIO
from pathlib import Path
from typing import Any

from babel import Locale
from babel.dates import format_skeleton, format_time, get_datetime_format
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from babel.units import format_unit

from server.errors import N_  # noqa: F401 - the one marker; the pages take it from here

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = {"en": "English", "ru": "Русский"}
DEFAULT = "en"
COOKIE = "botflow_lang"
ONE_YEAR = 365 * 24 * 3600

_current: ContextVar[str] = ContextVar("botflow_lang", default=DEFAULT)


@lru_cache(maxsize=None)
def _catalog(lang: str, domain: str) -> Any:
    """The .po catalogue of `lang` and `domain`, or None (English is the source language)."""
    path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{domain}.po"
    if lang == DEFAULT or not path.exists():
        return None
    with path.open("rb") as fh:
        return read_po(fh, locale=lang, domain=domain)


@lru_cache(maxsize=None)
def translations(lang: str) -> stdlib_gettext.NullTranslations:
    """gettext translations for pages and forms, compiled in memory so no build step is needed."""
    catalog = _catalog(lang, "messages")
    if catalog is None:
        return stdlib_gettext.NullTranslations()
    buffer = BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return Translations(buffer, domain="messages")


@lru_cache(maxsize=None)
def js_catalogue(lang: str) -> dict[str, str]:
    """English text -> translation for the scripts' t() (static/js), as the page renders it into JSON."""
    catalog = _catalog(lang, "js")
    if catalog is None:
        return {}
    return {str(m.id): str(m.string) for m in catalog if m.id and m.string and not m.fuzzy}


def negotiate(accept_language: str | None) -> str:
    """The first supported language of an Accept-Language header, by weight; English when none fits."""
    best, best_q = DEFAULT, -1.0
    for order, part in enumerate((accept_language or "").split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        code = tag.strip().lower().split("-")[0]
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if code in LANGUAGES and q > best_q and q > 0:
            best, best_q = code, q - order * 1e-6
    return best


def choose(cookie: str | None, accept_language: str | None) -> str:
    """The language a person chose with the switch, else their browser's."""
    if cookie in LANGUAGES:
        return str(cookie)
    return negotiate(accept_language)


def set_language(lang: str) -> None:
    _current.set(lang if lang in LANGUAGES else DEFAULT)


def current_language() -> str:
    return _current.get()


def gettext(message: str) -> str:
    """`message` in the current request's language."""
    return translations(current_language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(current_language()).ngettext(singular, plural, n)


_ = gettext


ROLE_LABELS = {"viewer": N_("viewer"), "editor": N_("editor"), "publisher": N_("publisher"), "admin": N_("admin")}


BOT_FIELDS = {"title": N_("title"), "token": N_("token"), "webhook_secret": N_("webhook secret"),
              "require_tests": N_("publishing only tested versions")}


def bot_field(name: str) -> str:
    return gettext(BOT_FIELDS[name]) if name in BOT_FIELDS else name


def role_name(role: str) -> str:
    return gettext(ROLE_LABELS[role]) if role in ROLE_LABELS else role


def format_size(size: int) -> str:
    """A byte count as "1 MB" / "512 кБ" in the current language (in binary units, as the limits are set)."""
    for unit, scale in (("digital-megabyte", 1 << 20), ("digital-kilobyte", 1 << 10)):
        if size >= scale:
            return format_unit(round(size / scale, 1), unit, length="short", locale=current_language(),
                               format="#,##0.#")
    return format_unit(size, "digital-byte", length="short", locale=current_language())


def human_datetime(value: Any) -> str:
    """A stored timestamp (ISO text or datetime, UTC) as "1 Dec 2026, 09:26" in the current language."""
    if not value:
        return "—"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    lang = current_language()
    date = format_skeleton("yMMMd", value, tzinfo=timezone.utc, locale=lang)
    time = format_time(value, "short", tzinfo=timezone.utc, locale=lang)
    return str(get_datetime_format("medium", locale=lang)).replace("{1}", date).replace("{0}", time).replace("'", "")


def _header(scope: Any, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""


def _cookie(header: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == COOKIE:
            return value.strip()
    return None


# Paths no person reads, so their language is never looked up.
UNREAD_PREFIXES = ("/api", "/webhooks", "/static", "/healthz", "/readyz", "/schema", "/metrics")
FOLLOW_BROWSER = "auto"  # the cookie's value for "looked up, nothing chosen": saves a lookup per page
LOOKUP_TTL = 3600


async def stored_language(scope: Any) -> str | None:
    """The language the signed-in user chose with the switch (kept on the user), or None."""
    from sqlalchemy import select

    from server.db.models import UserRow

    user = scope.get("user")
    if user is None:
        return None
    async with scope["app"].state.db.session() as session:
        found = (await session.execute(select(UserRow.language).where(UserRow.id == user.id))).scalar()
    return found if found in LANGUAGES else None


def language_cookie(value: str, max_age: int = ONE_YEAR) -> str:
    return f"{COOKIE}={value}; Max-Age={max_age}; Path=/; SameSite=Lax; HttpOnly"


def language_middleware(app: Any) -> Any:
    """Set the request's language before any handler or template runs: the switch's cookie, else the
    signed-in user's stored choice (remembered in the cookie from then on), else the browser's."""

    async def middleware(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        cookie = _cookie(_header(scope, b"cookie"))
        accept = _header(scope, b"accept-language")
        if cookie is not None or scope.get("user") is None or scope.get("path", "").startswith(UNREAD_PREFIXES):
            set_language(choose(cookie, accept))
            await app(scope, receive, send)
            return
        stored = await stored_language(scope)
        set_language(choose(stored, accept))
        header = language_cookie(stored, ONE_YEAR) if stored else language_cookie(FOLLOW_BROWSER, LOOKUP_TTL)

        async def remember(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", header.encode())]}
            await send(message)

        await app(scope, receive, remember)

    return middleware


def configure_templates(engine: Any) -> None:
    """Jinja's i18n extension with our gettext, plus the language helpers every page uses."""
    env = engine.engine
    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_callables(gettext, ngettext, newstyle=True)
    env.globals.update(current_language=current_language, js_catalogue=lambda: js_catalogue(current_language()),
                       languages=LANGUAGES, role_name=role_name)
    env.filters["human_datetime"] = human_datetime
    env.filters["bot_field"] = bot_field


def language_name(code: str) -> str:
    """A flow language's code as its name in the current UI language ("en" -> "английский"), else the code."""
    try:
        name = Locale.parse(current_language()).languages.get(code)
    except (ValueError, TypeError):
        name = None
    return name or code
