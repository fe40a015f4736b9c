"""Integration fixtures: the app over HTTP on SQLite and on a private PostgreSQL database, users per role.

Reusable pieces: `database_url` (parametrised sqlite/postgres, wiped before each test), `make_app(**overrides)`,
`app_client` (an httpx client bound to a running app), `admin_headers`, `role_headers(role)` and
`tests.integration.api_helpers` (user creation, sample documents).
"""
from __future__ import annotations

import asyncio
import os
import secrets
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text

from server.app import create_app
from server.db.engine import make_engine
from server.services.flows import set_action_allow
from server.settings import Settings
from tests.integration.api_helpers import bearer, create_user
from tests.integration.stray_tasks import no_stray_tasks  # noqa: F401 (autouse fixture)

PG_SERVER = os.environ.get("BOTFLOW_TEST_PG_SERVER", "postgresql://postgres@127.0.0.1:5432")
SESSION_TAG = f"{os.getpid()}_{uuid.uuid4().hex[:8]}"
BOOTSTRAP_TOKEN = "bf-test-" + secrets.token_urlsafe(16)


def off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    """Run blocking set-up (asyncio.run, Alembic) in a thread, whatever loop the caller is in."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


async def _pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(f"{PG_SERVER}/postgres", timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def create_pg_database(prefix: str = "botflow_test") -> str:
    """A new, empty, uniquely named PostgreSQL database; returns its async URL."""
    name = f"{prefix}_{SESSION_TAG}_{uuid.uuid4().hex[:6]}"
    try:
        off_loop(asyncio.run, _pg_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, ConnectionError) as exc:
        if os.environ.get("CI"):  # CI starts PostgreSQL (tests/run.sh): a skip there would hide a broken set-up
            pytest.fail(f"PostgreSQL at {PG_SERVER} does not answer: {exc}")
        pytest.skip(f"PostgreSQL at {PG_SERVER} does not answer: {exc}")
    return f"{PG_SERVER.replace('postgresql://', 'postgresql+asyncpg://')}/{name}"


def drop_pg_database(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    off_loop(asyncio.run, _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def sqlite_database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite file migrated to head, shared by the session (wiped per test by `database_url`)."""
    from server.db.migrate import upgrade_blocking

    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('db') / 'botflow.db'}"
    off_loop(upgrade_blocking, url)
    return url


@pytest.fixture(scope="session")
def postgres_database_url() -> Iterator[str]:
    """A private PostgreSQL database migrated to head; dropped when the session ends."""
    from server.db.migrate import upgrade_blocking

    url = create_pg_database()
    try:
        off_loop(upgrade_blocking, url)
        yield url
    finally:
        drop_pg_database(url)


async def wipe(url: str) -> None:
    """Empty every table but alembic_version, so each test starts from a fresh, migrated database."""
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            if url.startswith("postgresql"):
                names = (await conn.execute(text(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
                ))).scalars().all()
                # DELETE with foreign-key triggers off is much faster than TRUNCATE on a handful of tiny tables.
                await conn.execute(text("SET LOCAL session_replication_role = replica"))
                for name in names:
                    await conn.execute(text(f'DELETE FROM "{name}"'))
            else:
                await conn.execute(text("PRAGMA foreign_keys=OFF"))
                names = (await conn.execute(text(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                    "AND name <> 'alembic_version'"))).scalars().all()
                for name in names:
                    await conn.execute(text(f'DELETE FROM "{name}"'))
    finally:
        await engine.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    """The same test on SQLite and on PostgreSQL, each time on empty tables."""
    url = request.getfixturevalue(f"{request.param}_database_url")
    off_loop(asyncio.run, wipe(url))
    return url


@pytest.fixture
def bootstrap_token() -> str:
    return BOOTSTRAP_TOKEN


@pytest.fixture
def make_app(database_url: str, bootstrap_token: str) -> Callable[..., Litestar]:
    """`make_app({"max_body": 10})` or `make_app(max_body=10)`: an app on this test's database with the
    bootstrap admin token; start it with `async with AsyncTestClient(app=...)`."""

    def factory(settings_overrides: dict[str, Any] | None = None, **overrides: Any) -> Litestar:
        values: dict[str, Any] = {"database_url": database_url, "bootstrap_token": bootstrap_token,
                                  "secret_key": "integration-test-secret"}
        values.update(settings_overrides or {})
        values.update(overrides)
        return create_app(Settings(**values))

    return factory


# The app with the default settings, per database: building one registers every route (about 0.15 s, more
# than most tests take), while starting it is what makes it fresh. Start-up sets everything a test can see
# (database, runtime, watchdog); the tables are emptied before each test (`database_url`).
_DEFAULT_APPS: dict[str, Litestar] = {}


@pytest.fixture
async def app_client(make_app: Callable[..., Litestar], database_url: str) -> AsyncIterator[AsyncTestClient]:
    """An HTTP client on a started app with the default settings (start-up and shutdown hooks run)."""
    app = _DEFAULT_APPS.get(database_url)
    if app is None:
        app = _DEFAULT_APPS[database_url] = make_app()
    set_action_allow(app.state.settings.action_allow)  # process-wide, and another test's app may have changed it
    async with AsyncTestClient(app=app, timeout=30) as client:
        yield client


@pytest.fixture
def admin_headers(bootstrap_token: str) -> dict[str, str]:
    return bearer(bootstrap_token)


@pytest.fixture
def role_headers(app_client: AsyncTestClient, admin_headers: dict[str, str]) -> Callable[..., Any]:
    """`await role_headers("editor")`: headers of a new user with that role."""

    async def factory(role: str, username: str | None = None) -> dict[str, str]:
        return (await create_user(app_client, admin_headers, role, username))["headers"]

    return factory
