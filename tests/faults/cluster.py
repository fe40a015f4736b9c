"""What the fault suite runs against: PostgreSQL, a private Redis with AOF, the fake MAX and N replicas."""
from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from server.devtools.fake_max import FakeMax
from tests.processes import free_port
from tests.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
# The checkout the replicas run (default this one): set it to compare another branch under the same faults.
SERVER_ROOT = Path(os.environ.get("BOTFLOW_FAULTS_SERVER", ROOT)).resolve()
PG_SERVER = os.environ.get("BOTFLOW_TEST_PG_SERVER", "postgresql://postgres@127.0.0.1:5432")


def bot_token(bot: str) -> str:
    """Each experiment's bot has its own token, so the fake MAX's records of one run never mix with another's."""
    return f"faults-token-{bot}"
WEBHOOK_SECRET = "faults_secret"


def _pg(sql: str) -> None:
    """One statement on the PostgreSQL server's maintenance database (in a thread of its own)."""
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(f"{PG_SERVER}/postgres", timeout=10)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result(timeout=60)


class Replica:
    """One `botflow serve` process on its own port; kill -9 and start again at will."""

    def __init__(self, index: int, env: dict[str, str], workdir: Path) -> None:
        self.index = index
        self.port = free_port()
        self.env = env
        self.workdir = workdir
        self.log = workdir / f"replica-{index}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=self.workdir, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, seconds: float = 60.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not self.alive:
                raise RuntimeError(f"replica {self.index} exited: {self.log_tail()}")
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"replica {self.index} not ready within {seconds} s: {self.log_tail()}")

    def kill(self) -> None:
        """kill -9: no shutdown hook runs, locks and leases stay behind."""
        if self.alive:
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.alive:
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)

    def log_tail(self, size: int = 1500) -> str:
        try:
            return self.log.read_text(errors="replace")[-size:]
        except OSError:
            return ""


class Cluster:
    """Everything started on 127.0.0.1 with free ports; `close()` ends every process it started."""

    def __init__(self, replicas: int = 3, *, max_rate: float = 1000.0, extra_env: dict[str, str] | None = None) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="bf-faults-"))
        self.db_name = f"bf_faults_{uuid.uuid4().hex[:10]}"
        self.admin_token = "bf-faults-" + secrets.token_urlsafe(12)
        self.secret_key = "faults-" + self.db_name  # the replicas' logs name users by a hash keyed with it
        self.redis = RedisServer(aof=True)
        self.fake = FakeMax(tokens=None, max_calls=200_000)  # any token: every experiment has its own
        self.size = replicas
        self.max_rate = max_rate
        self.extra_env = extra_env or {}
        self.replicas: list[Replica] = []
        self._db_created = False

    @property
    def database_url(self) -> str:
        return f"{PG_SERVER.replace('postgresql://', 'postgresql+asyncpg://')}/{self.db_name}"

    def start(self) -> Cluster:
        try:
            _pg(f'CREATE DATABASE "{self.db_name}"')
            self._db_created = True
            self.redis.start()
            self.fake.start()
            env = {**os.environ, "BOTFLOW_DATABASE_URL": self.database_url, "BOTFLOW_REDIS_URL": self.redis.url,
                   "BOTFLOW_MAX_API_URL": self.fake.url, "BOTFLOW_BOOTSTRAP_TOKEN": self.admin_token,
                   "BOTFLOW_MAX_RATE": str(self.max_rate), "BOTFLOW_SECRET_KEY": self.secret_key,
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(SERVER_ROOT), os.environ.get("PYTHONPATH")])),
                   "PYTHONDONTWRITEBYTECODE": "1", **self.extra_env}
            env.pop("BOTFLOW_PUBLIC_URL", None)
            self.replicas = [Replica(i, env, self.workdir) for i in range(self.size)]
            # The first one migrates the empty database; the others start once it has.
            self.replicas[0].start()
            self.replicas[0].wait_ready()
            for replica in self.replicas[1:]:
                replica.start()
            for replica in self.replicas[1:]:
                replica.wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def live(self) -> list[Replica]:
        return [r for r in self.replicas if r.alive]

    async def restart(self, replica: Replica, after: float = 0.0) -> None:
        """Start a killed replica again (after `after` seconds) and wait until it is ready."""
        await asyncio.sleep(after)
        await asyncio.to_thread(replica.start)
        await asyncio.to_thread(replica.wait_ready)

    async def ensure_all_up(self) -> None:
        """Between experiments: every replica and Redis running, MAX healthy."""
        if not self.redis.ping():
            await asyncio.to_thread(self.redis.start)
        for replica in self.replicas:
            if not replica.alive:
                await self.restart(replica)
        for replica in self.replicas:
            await asyncio.to_thread(replica.wait_ready, 30)

    def api(self, replica: int = 0) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.replicas[replica].url + "/api", timeout=30,
                                 headers={"Authorization": f"Bearer {self.admin_token}"})

    async def deploy(self, bot: str, document: dict[str, Any]) -> int:
        """Create the flow, freeze it, create the bot and publish the version; returns the version."""
        async with self.api() as api:
            created = await api.post("/flows", json=document)
            if created.status_code not in (201, 409):
                raise RuntimeError(f"creating flow {document['id']}: {created.status_code} {created.text}")
            frozen = await api.post(f"/flows/{document['id']}/versions", json={"note": "fault suite"})
            if frozen.status_code not in (200, 201):
                raise RuntimeError(f"freezing {document['id']}: {frozen.status_code} {frozen.text}")
            version = frozen.json()["version"]
            made = await api.post("/bots", json={"id": bot, "title": f"Faults {bot}", "token": bot_token(bot),
                                                 "webhook_secret": WEBHOOK_SECRET})
            if made.status_code != 201:
                raise RuntimeError(f"creating bot {bot}: {made.status_code} {made.text}")
            published = await api.post(f"/bots/{bot}/publish",
                                       json={"flow": document["id"], "version": version, "sessions": "keep"})
            if published.status_code != 200:
                raise RuntimeError(f"publishing {bot}: {published.status_code} {published.text}")
        await asyncio.sleep(1.2)  # every replica sees a publish within 1 s
        return version

    async def simulate(self, flow: str, version: int, session: str, update: dict[str, Any]) -> list[str]:
        """The reply texts the engine gives `update` in a sandbox session: what a live user should see."""
        async with self.api() as api:
            answer = await api.post(f"/flows/{flow}/simulate",
                                    json={"session": session, "update": update, "source": version})
            if answer.status_code != 200:
                raise RuntimeError(f"simulate: {answer.status_code} {answer.text}")
            return [reply["text"] for reply in answer.json()["replies"]]

    def redis_call(self, *args: Any) -> Any:
        """One command on the suite's own Redis (inspection only)."""
        from redis import Redis

        client = Redis.from_url(self.redis.url, socket_timeout=5)
        try:
            return client.execute_command(*args)
        finally:
            client.close()

    def close(self) -> None:
        """Stop every process this cluster started and drop its database, whatever state they are in."""
        for replica in self.replicas:
            try:
                replica.kill()
            except Exception:  # noqa: BLE001 - keep closing the rest
                pass
        try:
            self.fake.stop()
        except Exception:  # noqa: BLE001
            pass
        self.redis.cleanup()
        if self._db_created:
            try:
                _pg(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
            except Exception:  # noqa: BLE001
                pass
            self._db_created = False
        if not os.environ.get("BOTFLOW_FAULTS_KEEP_LOGS"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
