"""The application factory: API, runtime and designer routes on one Litestar app."""
from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from flows.format import FLOW_ID, ID_MAX
from litestar import Litestar, Request
from litestar.config.compression import CompressionConfig
from litestar.config.csrf import CSRFConfig
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException, PermissionDeniedException
from litestar.middleware.session.client_side import ClientSideSessionBackend, CookieBackendConfig
from litestar.openapi import OpenAPIConfig
from litestar.template.config import TemplateConfig
from sqlalchemy.ext.asyncio import AsyncSession

import web
from server import design_pool
from server.api import ROUTES as API_ROUTES
from server.api import erasure, funnel, live_dialogs, metrics, user_dialogs
from server.api.experiments import AutoPromotion
from server.api.docs import render_plugins
from server.api.webhooks import webhook_route
from server.auth import auth_middleware
from server.csrf import stale_csrf_middleware
from server.headers import security_headers_middleware, template_nonce
from server.db.engine import Database
from server.db.migrate import upgrade
from server.db.sealed import BOX, seal_stored
from server.db.outage import OUTAGE_HANDLERS
from server.dependencies import wait_for_dependencies
from server.errors import EXCEPTION_HANDLERS
from server.logs import install_request_ids
from server.runtime import fastpath, lifecycle
from server.channels.max import CHANNEL
from server.channels.max.sender import max_client_of
from server.channels.max.watchdog import SubscriptionWatchdog
from server.services.flows import set_action_allow
from server.services.users import ensure_bootstrap
from server.settings import Settings
from server.assets import index_for
from server.static_files import static_file
from server.version import botflow_version
from web.i18n import configure_templates, language_middleware
from web.pages_auth import refused_form
from web.pages_fallback import page_or_json, visitor_hook
from web.routes import ROUTES as WEB_ROUTES

log = logging.getLogger("botflow.app")
WEB_DIR = Path(web.__file__).resolve().parent
# In the repository web/static links to the top-level static/; an installed wheel carries a copy there.
STATIC_DIR = WEB_DIR / "static"


async def provide_db_session(state: State) -> AsyncGenerator[AsyncSession, None]:
    """One AsyncSession per request; services commit what they change."""
    async with state.db.session() as session:
        yield session


async def startup(app: Litestar) -> None:
    """Open the database, migrate it, refresh the bootstrap token, then start the runtime."""
    settings: Settings = app.state.settings
    if settings.secret_key_generated:
        log.warning("BOTFLOW_SECRET_KEY is not set: browser sessions end when the server restarts")
    app.state.db = Database(settings.database_url, settings.db_timeout)
    await wait_for_dependencies(settings, app.state.db)
    await upgrade(settings.database_url)
    await seal_stored(app.state.db)  # bot secrets from before encryption, or under a key being rotated out
    if settings.bootstrap_token:
        async with app.state.db.session() as session:
            await ensure_bootstrap(session, settings.bootstrap_token)
    await lifecycle.startup(app)
    app.state.promotion = AutoPromotion(app)
    app.state.promotion.start()
    # Without a public address the checks only look (the bot page says when MAX lists no webhook).
    app.state.watchdog = SubscriptionWatchdog(app.state.db.sessionmaker, max_client_of(lifecycle.runtime_of(app).link),
                                              settings.public_url, settings.subscription_check)
    app.state.watchdog.start()


async def shutdown(app: Litestar) -> None:
    """Stop the subscription checks and the runtime, then close the database."""
    watchdog = getattr(app.state, "watchdog", None)
    if watchdog is not None:
        await lifecycle.bounded("the subscription checks", watchdog.stop())
    promotion = getattr(app.state, "promotion", None)
    if promotion is not None:
        await lifecycle.bounded("the experiment checks", promotion.stop())
    try:
        await lifecycle.shutdown(app)
    except Exception:  # closing the database still matters when the runtime fails to stop
        log.exception("runtime shutdown failed")
    design_pool.shutdown()
    db = getattr(app.state, "db", None)
    if db is not None:
        await lifecycle.bounded("the database connections", db.dispose())


def exception_handlers() -> dict[Any, Any]:
    """The API's error handlers, plus the designer's answers for browsers: a form with an outdated CSRF token,
    and a page (not JSON) where there is none."""
    return {**EXCEPTION_HANDLERS, **OUTAGE_HANDLERS, HTTPException: page_or_json, PermissionDeniedException: refused_form}


def configure_engine(engine: JinjaTemplateEngine) -> None:
    """The designer's languages, `csp_nonce()` for the inline scripts a page carries, and `asset(name)`, the
    versioned address of a file under static/ (server.assets), and the flow id's rule."""
    configure_templates(engine)
    engine.register_template_callable("csp_nonce", template_nonce)
    engine.engine.globals["asset"] = index_for(STATIC_DIR).url
    # The id field checks in the browser with the rule the loader applies, not a copy of it.
    engine.engine.globals.update(flow_id_pattern=FLOW_ID.pattern, id_max=ID_MAX)


def create_app(settings: Settings | None = None) -> Litestar:
    """A configured app; raises SettingsError when the environment has a bad value."""
    settings = settings or Settings.from_env()
    set_action_allow(settings.action_allow)
    BOX.configure_from(settings)
    design_pool.configure(settings.design_workers, settings.design_queue)
    key = hashlib.sha256(settings.secret_key.encode()).digest()
    https = bool(settings.public_url and settings.public_url.startswith("https"))
    session_config = CookieBackendConfig(
        secret=key, key="botflow_session", httponly=True, samesite="lax",
        secure=https,
        max_age=14 * 24 * 3600,
        # MAX deliveries carry no cookies; parsing them and wrapping send costs every webhook for nothing.
        exclude=["^/webhooks/"],
    )
    csrf_config = CSRFConfig(
        secret=settings.secret_key, cookie_name="csrftoken", header_name="x-csrftoken", cookie_secure=https,
        exclude=["^/api", "^/webhooks", "^/healthz", "^/readyz"],
    )
    routes = [
        *API_ROUTES,
        webhook_route(CHANNEL),
        *user_dialogs.ROUTES, *live_dialogs.ROUTES, *erasure.ROUTES, *funnel.ROUTES,
        *WEB_ROUTES,
        static_file,
    ]
    app = Litestar(
        route_handlers=routes,
        state=State({"settings": settings, "assets": index_for(STATIC_DIR), "channel": CHANNEL}),
        dependencies={"db_session": Provide(provide_db_session)},
        # Stale CSRF cookies go first: the session and CSRF layers must never see them.
        middleware=[stale_csrf_middleware(settings.secret_key), session_config.middleware, auth_middleware,
                    language_middleware],
        csrf_config=csrf_config,
        exception_handlers=exception_handlers(),
        after_exception=[visitor_hook(ClientSideSessionBackend(config=session_config))],
        on_startup=[startup],
        on_shutdown=[shutdown],
        request_max_body_size=settings.max_body,
        # Pages, API answers and assets go compressed to a browser that asks for it. Behind the proxy
        # (deploy/Caddyfile) requests arrive without Accept-Encoding, and the proxy compresses instead.
        # Static files come compressed from the asset index, once per file, not through this.
        compression_config=CompressionConfig(backend="gzip", gzip_compress_level=6, minimum_size=1024,
                                             exclude=["^/static/", "^/favicon.ico"]),
        template_config=TemplateConfig(
            directory=WEB_DIR / "templates", engine=JinjaTemplateEngine,
            engine_callback=configure_engine),
        openapi_config=OpenAPIConfig(title="Botflow", version=botflow_version(), path="/schema", render_plugins=render_plugins()),
        logging_config=None,  # server.logs configures the process once; Litestar would add its own handlers
        debug=False,
    )
    # Around the router, so answers it makes itself (unknown addresses, wrong methods) carry the headers too;
    # MAX's webhook deliveries, which the fast path below answers, are no pages and go without.
    app.asgi_handler = security_headers_middleware(https)(app.asgi_handler)
    install_request_ids(app)  # every line logged while serving a page or API request names it
    metrics.install(app)  # scrapes skip the middleware, so they answer while the database is down
    fastpath.install(app)  # MAX webhooks skip the router and the middleware they do not use
    return app


def request_db(request: Request) -> Database:
    """The app's Database from a request."""
    return request.app.state.db
