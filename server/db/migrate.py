"""Run Alembic migrations from code: at start-up (in a thread) and for `botflow db upgrade`."""
from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(database_url: str) -> Config:
    """An Alembic config for our scripts that targets this database."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    # Passed as an attribute, not an option, so a '%' in a password needs no escaping.
    cfg.attributes["database_url"] = database_url
    return cfg


def upgrade_blocking(database_url: str, revision: str = "head") -> None:
    """Migrate to `revision`; blocks, and must not be called from a running event loop's thread."""
    command.upgrade(alembic_config(database_url), revision)


async def upgrade(database_url: str, revision: str = "head") -> None:
    """Migrate to `revision` from async code (Alembic's env runs its own loop in a worker thread)."""
    await asyncio.to_thread(upgrade_blocking, database_url, revision)


def upgrade_cli(args: Namespace) -> int:
    """`botflow db upgrade`: migrate the configured database to head."""
    from server.settings import settings_or_exit

    settings = settings_or_exit()
    revision = getattr(args, "revision", None) or "head"
    try:
        upgrade_blocking(settings.database_url, revision)
    except Exception as exc:  # a CLI reports and exits; the traceback helps nobody here
        print(f"botflow: migration failed: {exc}", file=sys.stderr)
        return 1
    print(f"database at {revision}")
    return 0
