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
from types import SimpleNamespace
from typing import Any

import httpx

from tests.faults.fake_process import FakeMaxProcess
from tests.faults.lag_proxy import LagProxy
from tests.outage_proxy import OutageProxy
from tests.processes import free_port
from tests.redis_server import RedisServer, SentinelServer

ROOT = Path(__file__).resolve().parents[2]
# The checkout the replicas run (default this one): set it to compare another branch under the same faults.
SERVER_ROOT = Path(os.environ.get("BOTFLOW_FAULTS_SERVER", ROOT)).resolve()
PG_SERVER = os.environ.get("BOTFLOW_TEST_PG_SERVER", "postgresql://postgres@127.0.0.1:5432")


FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
FAKETIME_ENV = ("LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_FAKE_MONOTONIC", "FAKETIME_NO_CACHE")


def faketime(offset: str) -> dict[str, str]:
    """The environment that runs a process with its wall clock `offset` off (faketime's "+4s", "-60s")."""
    return {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


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


def _role(server: RedisServer) -> str:
    """"master" or "slave", as the server says (an error when it does not answer)."""
    from redis import Redis

    client = Redis.from_url(server.url, socket_timeout=2)
    try:
        return client.info("replication")["role"]
    finally:
        client.close()


def _replicas_online(master: RedisServer, count: int, seconds: float = 20.0) -> None:
    """Wait until `count` replicas replicate from `master`."""
    from redis import Redis

    client = Redis.from_url(master.url, socket_timeout=2)
    deadline = time.monotonic() + seconds
    try:
        while sum(1 for key, value in client.info("replication").items()
                  if key.startswith("slave") and isinstance(value, dict) and value.get("state") == "online") < count:
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis replica did not come online")
            time.sleep(0.1)
    finally:
        client.close()


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

    def pause(self) -> None:
        """SIGSTOP: the process stands still (a GC pause, a stalled VM) with every socket left open."""
        if self.alive:
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self.alive:
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGCONT)

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
    """Everything started on 127.0.0.1 with free ports; `close()` ends every process it started.

    `sentinel`: Redis is a master, one replica (replicating through `replication_proxy`, which can hold
    back its stream) and three real `redis-sentinel` processes, and the replicas reach it by a
    redis+sentinel:// URL; the experiment owns that topology (nothing restarts a killed master).
    `pg_proxy`: the replicas reach PostgreSQL through `pg_proxy`, which can stop or black-hole it.
    """

    def __init__(self, replicas: int = 3, *, max_rate: float = 1000.0, extra_env: dict[str, str] | None = None,
                 sentinel: bool = False, pg_proxy: bool = False) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="bf-faults-"))
        self.db_name = f"bf_faults_{uuid.uuid4().hex[:10]}"
        self.admin_token = "bf-faults-" + secrets.token_urlsafe(12)
        self.secret_key = "faults-" + self.db_name  # the replicas' logs name users by a hash keyed with it
        self.redis = RedisServer(aof=True)
        self.sentinel = sentinel
        self.redis_replica: RedisServer | None = None
        self.replication_proxy: LagProxy | None = None
        self.sentinels: list[SentinelServer] = []
        self.use_pg_proxy = pg_proxy
        self.pg_proxy: OutageProxy | None = None
        # Replica 0 reaches Redis through this proxy, which can cut it off alone (`partition`).
        self.redis_proxy: OutageProxy | None = None
        # Any token (every experiment has its own); a process of its own, so its receive times are MAX's.
        self.fake = FakeMaxProcess(max_calls=200_000)
        self.size = replicas
        self.max_rate = max_rate
        self.extra_env = extra_env or {}
        self.replicas: list[Replica] = []
        self._db_created = False

    @property
    def database_url(self) -> str:
        server = PG_SERVER if self.pg_proxy is None else f"postgresql://postgres@127.0.0.1:{self.pg_proxy.port}"
        return f"{server.replace('postgresql://', 'postgresql+asyncpg://')}/{self.db_name}"

    def _start_redis(self) -> str:
        """Start Redis (with its replica and sentinels in `sentinel` mode); the URL the replicas use."""
        self.redis.start()
        if not self.sentinel:
            return self.redis.url
        # Everyone reaches the master through this proxy, which can hold back its stream to the replica alone.
        self.replication_proxy = LagProxy(self.redis.port).__enter__()
        address = SimpleNamespace(port=self.replication_proxy.port)
        self.redis_replica = RedisServer(aof=True, extra=("--replicaof", "127.0.0.1",
                                                          str(self.replication_proxy.port))).start()
        _replicas_online(self.redis, 1)
        self.sentinels = [SentinelServer(address).start() for _ in range(3)]  # type: ignore[arg-type]
        return "redis+sentinel://" + ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels) + "/mymaster"

    def master(self) -> RedisServer:
        """The Redis server that is master now (after a failover, the promoted replica)."""
        if self.redis_replica is not None and _role(self.redis_replica) == "master":
            return self.redis_replica
        return self.redis

    def start(self) -> Cluster:
        try:
            _pg(f'CREATE DATABASE "{self.db_name}"')
            self._db_created = True
            redis_url = self._start_redis()
            if self.use_pg_proxy:
                self.pg_proxy = OutageProxy(int(PG_SERVER.rsplit(":", 1)[1])).__enter__()
            self.fake.start()
            env = {**os.environ, "BOTFLOW_DATABASE_URL": self.database_url, "BOTFLOW_REDIS_URL": redis_url,
                   "BOTFLOW_MAX_API_URL": self.fake.url, "BOTFLOW_BOOTSTRAP_TOKEN": self.admin_token,
                   "BOTFLOW_MAX_RATE": str(self.max_rate), "BOTFLOW_SECRET_KEY": self.secret_key,
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(SERVER_ROOT), os.environ.get("PYTHONPATH")])),
                   "PYTHONDONTWRITEBYTECODE": "1", **self.extra_env}
            env.pop("BOTFLOW_PUBLIC_URL", None)
            self.redis_proxy = OutageProxy(self.redis.port).__enter__()
            self.replicas = [Replica(i, env, self.workdir) for i in range(self.size)]
            if not self.sentinel:
                self.replicas[0].env = {**env, "BOTFLOW_REDIS_URL": f"redis://127.0.0.1:{self.redis_proxy.port}/0"}
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

    async def restart_with(self, replica: Replica, env: dict[str, str]) -> None:
        """Start `replica` again with `env` added to its environment (the clock rows run it under faketime)."""
        await asyncio.to_thread(replica.stop)
        replica.env = {**{k: v for k, v in replica.env.items() if k not in FAKETIME_ENV}, **env}
        await self.restart(replica)

    async def ensure_all_up(self) -> None:
        """Between experiments: every replica and Redis running, MAX healthy (a sentinel topology is left
        as its experiment made it)."""
        if not self.sentinel and not self.redis.ping():
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

        client = Redis.from_url(self.master().url, socket_timeout=5)
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
        for server in (*self.sentinels, self.redis_replica, self.redis):
            if server is not None:
                server.cleanup()
        for proxy in (self.redis_proxy, self.replication_proxy, self.pg_proxy):
            if proxy is not None:
                try:
                    proxy.__exit__(None, None, None)
                except Exception:  # noqa: BLE001
                    pass
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
