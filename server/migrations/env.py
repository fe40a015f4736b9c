"""Alembic environment: async engines, SQLite batch mode, all models' metadata."""
from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

from server.db.all_models import metadata
from server.db.engine import is_sqlite, make_engine

config = context.config

# Any constant works; it only has to be the same for every replica migrating at once.
PG_LOCK_KEY = 7_312_004_411


def database_url() -> str:
    """The URL handed in by server.db.migrate, or the one in alembic.ini."""
    url: str | None = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL: run the migrations through server.db.migrate or set sqlalchemy.url")
    return url


def do_run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Replicas starting together must not run the same migration twice.
            connection.execute(text(f"SELECT pg_advisory_xact_lock({PG_LOCK_KEY})"))
        context.run_migrations()


async def run_async_migrations(url: str) -> None:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
        return
    asyncio.run(run_async_migrations(database_url()))


def run_migrations_offline() -> None:
    url = database_url()
    context.configure(
        url=url, target_metadata=metadata, literal_binds=True,
        render_as_batch=is_sqlite(url),
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
