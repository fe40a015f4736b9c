"""A private Redis Cluster for tests: 6 `redis-server --cluster-enabled` processes, 3 masters and 3 replicas."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import random
import socket

NODE_TIMEOUT_MS = 2000  # how soon replicas take over a master that stopped answering


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def cluster_port() -> int:
    """A free port whose cluster bus port (10000 above) is free too, and below 65536."""
    while True:
        port = random.randint(20_000, 45_000)
        if _free(port) and _free(port + 10_000):
            return port


class LocalCluster:
    """Six nodes in a temporary directory, made one cluster by `redis-cli --cluster create`."""

    def __init__(self, masters: int = 3, replicas: int = 1) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bf-cluster-"))
        self.ports = [cluster_port() for _ in range(masters * (1 + replicas))]
        self.replicas = replicas
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def start_node(self, port: int) -> None:
        node = self.dir / str(port)
        node.mkdir(exist_ok=True)
        self.procs[port] = subprocess.Popen(
            [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1",
             "--dir", str(node), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--logfile", str(node / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def cli(self, port: int, *args: str) -> str:
        return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                              timeout=30).stdout

    def start(self) -> LocalCluster:
        for port in self.ports:
            self.start_node(port)
        for port in self.ports:
            self.wait(lambda p=port: self.cli(p, "PING").strip() == "PONG")
        if len(self.ports) == 1:  # `--cluster create` wants 3 masters: one node takes every slot itself
            self.cli(self.ports[0], "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
            self.wait(self.ok)
            return self
        subprocess.run(["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                        "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                       capture_output=True, check=True, timeout=60)
        self.wait(self.ok)
        return self

    def ok(self) -> bool:
        """Every node says the cluster is ok and they all draw the same slot map (a client that read a map
        still converging meets MOVED, and redis-py drops its connections to draw it again)."""
        if not all("cluster_state:ok" in self.cli(p, "CLUSTER", "INFO") for p in self.procs):
            return False
        maps = {self.cli(p, "CLUSTER", "SHARDS").count("master") for p in self.procs}
        return len({"".join(sorted(self.cli(p, "CLUSTER", "SLOTS").split())) for p in self.procs}) == 1 and bool(maps)

    def wait(self, done, within: float = 30.0) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + within
        while not done():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster did not settle in {within:g} s")
            time.sleep(0.1)

    def role(self, port: int) -> str:
        return self.cli(port, "ROLE").split("\n", 1)[0].strip()

    def replica_of(self, master: int) -> int:
        """A replica's port of the master on `master`."""
        for port in self.procs:
            info = self.cli(port, "INFO", "replication")
            if "role:slave" in info and f"master_port:{master}\n" in info:
                return port
        raise RuntimeError(f"no replica of {master}")

    def fail_over(self, master: int) -> int:
        """A manual (graceful) failover of that master to its replica; the new master's port."""
        replica = self.replica_of(master)
        for _ in range(4):  # a manual failover gives up when the replica cannot catch up in time: asked again
            self.cli(replica, "CLUSTER", "FAILOVER")
            try:
                self.wait(lambda: self.role(replica) == "master", within=8)
                break
            except RuntimeError:
                continue
        self.wait(lambda: self.role(replica) == "master" and self.ok())
        return replica

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
