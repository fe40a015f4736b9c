"""Starting as a new user would: refusals retrying cannot cure stop at once, signals are honoured while
waiting, and a server others reach needs BOTFLOW_SECRET_KEY. Each case runs `botflow serve` as a process."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import PG_SERVER
from tests.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
PG = PG_SERVER.replace("postgresql://", "postgresql+asyncpg://")
UNREACHABLE = "postgresql+asyncpg://postgres@127.0.0.1:1/botflow"


def env_with(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update(PYTHONPATH=str(ROOT), BOTFLOW_LOG_FORMAT="text", **extra)
    return env


def serve(tmp_path: Path, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(free_port())],
                            cwd=tmp_path, env=env_with(**extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def finished(process: subprocess.Popen[str], seconds: float) -> list[str]:
    output, _ = process.communicate(timeout=seconds)
    return [line for line in output.splitlines() if line.strip()]


@pytest.mark.parametrize("url, words", [
    (f"{PG}/botflow_no_such_database", "does not exist"),
    (PG.replace("postgres@", "no_such_role@", 1) + "/postgres", "refused the user"),
])
def test_a_refusal_retrying_cannot_cure_stops_at_once(tmp_path, url, words):
    # A start timeout of a day: only the refusal itself can end this run within the test's 60 s.
    lines = finished(serve(tmp_path, BOTFLOW_DATABASE_URL=url, BOTFLOW_SECRET_KEY="k", BOTFLOW_START_TIMEOUT="86400"),
                     60)
    assert words in lines[-1] and "BOTFLOW_DATABASE_URL" in lines[-1], lines
    assert not any("waiting for the database" in line for line in lines), lines
    assert not any("Traceback" in line or "ExceptionGroup" in line for line in lines), lines


def test_an_unreachable_database_ends_in_one_line_naming_the_variable(tmp_path):
    process = serve(tmp_path, BOTFLOW_DATABASE_URL=UNREACHABLE, BOTFLOW_SECRET_KEY="k", BOTFLOW_START_TIMEOUT="1")
    lines = finished(process, 60)
    assert process.returncode == 1
    assert lines[-1].startswith("botflow: the database at 127.0.0.1:1/botflow did not answer"), lines
    assert "BOTFLOW_DATABASE_URL" in lines[-1]
    assert not any("Traceback" in line or "ExceptionGroup" in line for line in lines), lines


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_the_wait_for_the_database(tmp_path, stop):
    process = serve(tmp_path, BOTFLOW_DATABASE_URL=UNREACHABLE, BOTFLOW_SECRET_KEY="k", BOTFLOW_START_TIMEOUT="86400")
    assert process.stdout is not None
    for line in process.stdout:
        if "waiting for the database" in line:
            break
    process.send_signal(stop)
    rest = finished(process, 10)  # the wait itself would last a day
    assert process.returncode == 0
    assert rest[-1] == f"botflow: stopped by {stop.name} before the server started", rest


@pytest.mark.parametrize("extra, why", [
    ({"BOTFLOW_DATABASE_URL": UNREACHABLE}, "PostgreSQL"),
    ({"BOTFLOW_PUBLIC_URL": "https://bots.example.com"}, "BOTFLOW_PUBLIC_URL"),
    ({"BOTFLOW_DATABASE_URL": UNREACHABLE, "BOTFLOW_SECRET_KEY": "   "}, "PostgreSQL"),
])
def test_a_server_others_reach_needs_a_secret_key(tmp_path, extra, why):
    process = serve(tmp_path, **extra)
    lines = finished(process, 60)
    assert process.returncode == 2
    assert len(lines) == 1 and lines[0].startswith("botflow: BOTFLOW_SECRET_KEY must be set") and why in lines[0], lines
    assert not (tmp_path / "botflow.db").exists()
