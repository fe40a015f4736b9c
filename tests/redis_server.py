"""A private redis-server process for tests and the fault suite: its own port or unix socket, dir and AOF."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.processes import free_port


class RedisServer:
    """`redis-server` in a temporary directory; `kill()` is kill -9, `start()` again replays the AOF."""

    def __init__(self, *, unix: bool = False, aof: bool = False, port: int | None = None,
                 extra: tuple[str, ...] = ()) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bf-redis-"))
        self.unix = unix
        self.aof = aof
        self.port = 0 if unix else (port or free_port())
        self.socket_path = str(self.dir / "redis.sock")
        self.proc: subprocess.Popen[bytes] | None = None
        self.extra = extra  # more redis-server options ("--replicaof", host, port)

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}?db=0" if self.unix else f"redis://127.0.0.1:{self.port}/0"

    def start(self, wait: float = 10.0) -> RedisServer:
        """Start (or restart) the server and wait until it answers PING."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                "--save", "", "--daemonize", "no", "--logfile", str(self.dir / "redis.log")]
        if self.unix:
            args += ["--unixsocket", self.socket_path, "--unixsocketperm", "700"]
        if self.aof:
            args += ["--appendonly", "yes", "--appendfsync", "everysec"]
        args += list(self.extra)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + wait
        while not self.ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start: {self.log_tail()}")
            time.sleep(0.02)
        return self

    def ping(self) -> bool:
        """True when the server answers PING (AOF loading answers an error, which counts as not yet)."""
        try:
            if self.unix:
                sock = socket.socket(socket.AF_UNIX)
                sock.settimeout(0.5)
                sock.connect(self.socket_path)
            else:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            with sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """kill -9: whatever the AOF had not written in the last second is gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def pause(self) -> None:
        """SIGSTOP: the port stays open but nothing answers (a hung server)."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """End the process (also a stopped one) and wait for it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def log_tail(self) -> str:
        try:
            return (self.dir / "redis.log").read_text()[-500:]
        except OSError:
            return ""

    def cleanup(self) -> None:
        """Stop and delete the directory."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


class SentinelServer(RedisServer):
    """A real Redis Sentinel (`redis-server <conf> --sentinel`) watching `master` under `name`; quick to
    declare a master down (`down_ms`), so a test's failover takes a few seconds."""

    def __init__(self, master: RedisServer, name: str = "mymaster", quorum: int = 2, down_ms: int = 1000) -> None:
        super().__init__()
        self.master, self.name, self.quorum, self.down_ms = master, name, quorum, down_ms

    def start(self, wait: float = 10.0) -> SentinelServer:
        binary = shutil.which("redis-sentinel") or shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        conf = self.dir / "sentinel.conf"  # Sentinel rewrites its own config file: it must be writable
        if not conf.exists():
            conf.write_text(
                f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\nlogfile {self.dir / 'redis.log'}\n"
                f"sentinel monitor {self.name} 127.0.0.1 {self.master.port} {self.quorum}\n"
                f"sentinel down-after-milliseconds {self.name} {self.down_ms}\n"
                f"sentinel failover-timeout {self.name} {self.down_ms * 3}\n"
                f"sentinel parallel-syncs {self.name} 1\n")
        self.proc = subprocess.Popen([binary, str(conf), "--sentinel"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + wait
        while not self.ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-sentinel did not start: {self.log_tail()}")
            time.sleep(0.02)
        return self


if os.name != "posix":  # pragma: no cover - the suite runs on Linux
    raise ImportError("RedisServer needs a POSIX system")
