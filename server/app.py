"""The application factory: API, runtime and designer routes on one Litestar app."""
from __future__ import annotations

import hashlib
import importlib
import logging
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from litestar import Litestar, Request
from litestar.config.csrf import CSRFConfig
from litestar.contrib.jinja import JinjaTemplateEngine
from litestar.datastructures import State
from litestar.exceptions import HTTPException
from litestar.di import Provide
from litestar.middleware.session.client_side import CookieBackendConfig
from litestar.openapi import OpenAPIConfig
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from sqlalchemy.ext.asyncio import AsyncSession

from server.auth import auth_middleware
from server.db.engine import Database
from server.db.migrate import upgrade
from server.errors import EXCEPTION_HANDLERS
from server.settings import Settings
from web.i18n import configure_templates, language_middleware
from web.pages_fallback import page_or_json

log = logging.getLogger("botflow.app")
ROOT = Path(__file__).resolve().parent.parent


def optional_routes(module_name: str) -> list[Any]:
    """`ROUTES` of another stream's module; empty while that module does not exist yet."""
    module = optional_module(module_name)
    return list(getattr(module, "ROUTES", [])) if module else []


def optional_module(module_name: str) -> Any:
    """Import a module that may not be written yet; real import errors inside it still raise."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            return None
        raise


async def provide_db_session(state: State) -> AsyncGenerator[AsyncSession, None]:
    """One AsyncSession per request; services commit what they change."""
    async with state.db.session() as session:
        yield session


async def startup(app: Litestar) -> None:
    """Open the database, migrate it, refresh the bootstrap token, then start the runtime."""
    from server.services.users import ensure_bootstrap

    settings: Settings = app.state.settings
    if settings.secret_key_generated:
        log.warning("BOTFLOW_SECRET_KEY is not set: browser sessions end when the server restarts")
    app.state.db = Database(settings.database_url)
    await upgrade(settings.database_url)
    if settings.bootstrap_token:
        async with app.state.db.session() as session:
            await ensure_bootstrap(session, settings.bootstrap_token)
    lifecycle = optional_module("server.runtime.lifecycle")
    if lifecycle is not None and hasattr(lifecycle, "startup"):
        await lifecycle.startup(app)


async def shutdown(app: Litestar) -> None:
    """Stop the runtime, then close the database."""
    lifecycle = optional_module("server.runtime.lifecycle")
    if lifecycle is not None and hasattr(lifecycle, "shutdown"):
        try:
            await lifecycle.shutdown(app)
        except Exception:  # closing the database still matters when the runtime fails to stop
            log.exception("runtime shutdown failed")
    db = getattr(app.state, "db", None)
    if db is not None:
        await db.dispose()


def create_app(settings: Settings | None = None) -> Litestar:
    """A configured app; raises SettingsError when the environment has a bad value."""
    from server.api import ROUTES as API_ROUTES

    settings = settings or Settings.from_env()
    key = hashlib.sha256(settings.secret_key.encode()).digest()
    session_config = CookieBackendConfig(
        secret=key, key="botflow_session", httponly=True, samesite="lax",
        secure=bool(settings.public_url and settings.public_url.startswith("https")),
        max_age=14 * 24 * 3600,
        # MAX deliveries carry no cookies; parsing them and wrapping send costs every webhook for nothing.
        exclude=["^/webhooks/"],
    )
    csrf_config = CSRFConfig(
        secret=settings.secret_key, cookie_name="csrftoken", header_name="x-csrftoken",
        exclude=["^/api", "^/webhooks", "^/healthz", "^/readyz"],
    )
    routes = [
        *API_ROUTES,
        *optional_routes("server.runtime.routes"),
        *optional_routes("web.routes"),
        create_static_files_router(path="/static", directories=[ROOT / "static"], include_in_schema=False),
    ]
    app = Litestar(
        route_handlers=routes,
        state=State({"settings": settings}),
        dependencies={"db_session": Provide(provide_db_session)},
        middleware=[session_config.middleware, auth_middleware, language_middleware],
        csrf_config=csrf_config,
        exception_handlers={**EXCEPTION_HANDLERS, HTTPException: page_or_json},  # type: ignore[arg-type]
        on_startup=[startup],
        on_shutdown=[shutdown],
        request_max_body_size=settings.max_body,
        template_config=TemplateConfig(directory=ROOT / "web" / "templates", engine=JinjaTemplateEngine,
                                       engine_callback=configure_templates),
        openapi_config=OpenAPIConfig(title="Botflow", version="0.1.0", path="/schema"),
        debug=False,
    )
    fastpath = optional_module("server.runtime.fastpath")
    if fastpath is not None:
        fastpath.install(app)  # MAX webhooks skip the router and the middleware they do not use
    return app


def request_db(request: Request) -> Database:
    """The app's Database from a request."""
    return request.app.state.db
