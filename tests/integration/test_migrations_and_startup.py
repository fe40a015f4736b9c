"""Schema and start-up: migrations build exactly the models' schema; `botflow` starts with no set-up."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from server.db.all_models import metadata
from server.db.engine import make_engine
from server.db.migrate import upgrade_blocking
from tests.integration.conftest import create_pg_database, drop_pg_database, off_loop
from tests.processes import free_port, wait_answering

ROOT = Path(__file__).resolve().parents[2]


async def schema_diff(url: str) -> tuple[list, str | None]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            head = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()

            def compare(sync_conn):
                context = MigrationContext.configure(sync_conn, opts={"compare_type": True})
                return compare_metadata(context, metadata)

            return await conn.run_sync(compare), head
    finally:
        await engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_fresh_database_matches_models(backend, tmp_path):
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from server.db.migrate import MIGRATIONS

    url = f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}" if backend == "sqlite" else create_pg_database("botflow_fresh")
    try:
        off_loop(upgrade_blocking, url)
        off_loop(upgrade_blocking, url)  # a second run at head changes nothing and does not fail
        diffs, head = await schema_diff(url)
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        assert head == ScriptDirectory.from_config(config).get_current_head()
        assert diffs == [], diffs
    finally:
        if backend == "postgres":
            drop_pg_database(url)


def botflow(*args: str, cwd: Path, env: dict[str, str]) -> list[str]:
    return [sys.executable, "-c", "import sys; from server.cli import main; sys.exit(main())", *args]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def test_serve_on_a_fresh_directory_needs_no_setup(tmp_path):
    port = free_port()
    env = clean_env(BOTFLOW_BOOTSTRAP_TOKEN="fresh-start-token")
    cmd = botflow("serve", "--port", str(port), cwd=tmp_path, env=env)
    process = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_answering(f"http://127.0.0.1:{port}/readyz", process, 60)
        answer = httpx.get(f"http://127.0.0.1:{port}/api/flows", headers={"Authorization": "Bearer fresh-start-token"})
        assert answer.status_code == 200 and answer.json() == []
        assert httpx.get(f"http://127.0.0.1:{port}/schema/openapi.json").json()["paths"]["/api/flows"]
        assert (tmp_path / "botflow.db").exists()
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.mark.parametrize("name, value", [
    ("BOTFLOW_DATABASE_URL", "mysql://somewhere/db"),
    ("BOTFLOW_MAX_RATE", "fast"),
    ("BOTFLOW_MAX_BODY", "-5"),
    ("BOTFLOW_PUBLIC_URL", "bots.example.com"),
    ("BOTFLOW_REDIS_URL", "localhost:6379"),
    ("BOTFLOW_MAX_API_URL", "ftp://x"),
    ("BOTFLOW_ACTION_ALLOW", "crm.internal,not a host!"),
    ("BOTFLOW_DB_TIMEOUT", "0"),
    ("BOTFLOW_START_TIMEOUT", "soon"),
    ("BOTFLOW_SHUTDOWN_TIMEOUT", "-1"),
    ("BOTFLOW_LOG_FORMAT", "xml"),
    ("BOTFLOW_METRICS_TOKEN", "has spaces in it"),
])
def test_bad_setting_stops_startup_with_one_line(tmp_path, name, value):
    env = clean_env(**{name: value})
    result = subprocess.run(botflow("serve", "--port", str(free_port()), cwd=tmp_path, env=env), cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and name in lines[0], result.stderr


def test_db_upgrade_command(tmp_path):
    env = clean_env(BOTFLOW_DATABASE_URL=f"sqlite:///{tmp_path / 'cli.db'}")
    result = subprocess.run(botflow("db", "upgrade", cwd=tmp_path, env=env), cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    import sqlite3

    with sqlite3.connect(tmp_path / "cli.db") as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"flows", "flow_versions", "bots", "publications", "users", "api_tokens", "audit_log"} <= tables


@pytest.mark.postgres
def test_replicas_starting_together_migrate_a_fresh_database_once(tmp_path):
    """Four `botflow db upgrade` processes at once on an empty PostgreSQL database all succeed.

    Processes, not threads: Alembic's `context` and `op` are process-wide, as for real replicas.
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from tests.integration.conftest import create_pg_database, drop_pg_database

    url = create_pg_database("botflow_migrate_race")
    try:
        env = clean_env(BOTFLOW_DATABASE_URL=url)
        runs = [subprocess.Popen(botflow("db", "upgrade", cwd=tmp_path, env=env), cwd=tmp_path, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(4)]
        for run in runs:
            output, _ = run.communicate(timeout=120)
            assert run.returncode == 0, output

        async def versions() -> list[str]:
            from sqlalchemy import text

            from server.db.engine import make_engine

            engine = make_engine(url)
            try:
                async with engine.connect() as conn:
                    return list((await conn.execute(text("SELECT version_num FROM alembic_version"))).scalars())
            finally:
                await engine.dispose()

        with ThreadPoolExecutor(1) as pool:
            found = pool.submit(asyncio.run, versions()).result()
        assert len(found) == 1, found
    finally:
        drop_pg_database(url)
