"""Configuration from the environment, checked once at start-up."""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, overload
from urllib.parse import urlsplit

from server import redis_urls as sentinel


DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./botflow.db"
DEFAULT_MAX_API_URL = "https://platform-api2.max.ru"
DEFAULT_MAX_BODY = 1024 * 1024


class SettingsError(Exception):
    """A configuration value is unusable; the message is one line naming the variable."""


@dataclass(slots=True)
class Settings:
    """Everything the server reads from its environment."""

    database_url: str = DEFAULT_DATABASE_URL
    redis_url: str | None = None
    # BOTFLOW_REDIS_MIN_REPLICAS: Redis replicas that must hold a turn before its webhook answers 200.
    redis_min_replicas: int = 0
    max_api_url: str = DEFAULT_MAX_API_URL
    bootstrap_token: str | None = None
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    # BOTFLOW_SECRETS_KEY: Fernet keys (comma-separated, the first encrypts) for bot secrets at rest.
    secrets_key: str | None = None
    public_url: str | None = None
    max_rate: float = 30.0
    max_body: int = DEFAULT_MAX_BODY
    # Connections one process keeps open at most; past it a new one is answered 503 and closed.
    max_connections: int = 1000
    # BOTFLOW_ACTION_ALLOW: internal hosts and networks webhook actions may reach (server.egress.Allow).
    action_allow: tuple[str, ...] = ()
    # Seconds one database statement (or connection attempt) may take before it counts as an outage.
    db_timeout: float = 5.0
    # Seconds a starting replica waits for PostgreSQL (and Redis) before giving up.
    start_timeout: float = 60.0
    # Seconds SIGTERM waits for requests, turns and sends in flight.
    shutdown_timeout: float = 20.0
    # Seconds between checks that MAX still lists each bot's webhook (with BOTFLOW_PUBLIC_URL set).
    subscription_check: float = 300.0
    log_format: str | None = None
    metrics_token: str | None = None
    # Worker processes for the designer's CPU work (validation, exports, diffs; 0 = on the event loop), and
    # how many more jobs may wait for one before a request answers 503.
    design_workers: int = field(default_factory=lambda: default_design_workers())
    design_queue: int = 8
    # True when no BOTFLOW_SECRET_KEY was given, so sessions will not survive a restart.
    secret_key_generated: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read and check every BOTFLOW_* variable; raise SettingsError on the first bad one."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name)
            return value.strip() if value is not None and value.strip() else None

        secret = get("BOTFLOW_SECRET_KEY")
        settings = cls(
            database_url=database_url(get("BOTFLOW_DATABASE_URL") or DEFAULT_DATABASE_URL),
            redis_url=redis_url(get("BOTFLOW_REDIS_URL"), get("BOTFLOW_REDIS_SENTINELS"), get("BOTFLOW_REDIS_MASTER")),
            redis_min_replicas=whole_number("BOTFLOW_REDIS_MIN_REPLICAS", get("BOTFLOW_REDIS_MIN_REPLICAS"), 0),
            max_api_url=http_url("BOTFLOW_MAX_API_URL", get("BOTFLOW_MAX_API_URL") or DEFAULT_MAX_API_URL),
            bootstrap_token=bootstrap_token(get("BOTFLOW_BOOTSTRAP_TOKEN")),
            secret_key=secret or secrets.token_urlsafe(32),
            secrets_key=secrets_key(get("BOTFLOW_SECRETS_KEY")),
            public_url=http_url("BOTFLOW_PUBLIC_URL", get("BOTFLOW_PUBLIC_URL")),
            max_rate=positive_number("BOTFLOW_MAX_RATE", get("BOTFLOW_MAX_RATE"), 30.0),
            max_body=positive_int("BOTFLOW_MAX_BODY", get("BOTFLOW_MAX_BODY"), DEFAULT_MAX_BODY),
            max_connections=positive_int("BOTFLOW_MAX_CONNECTIONS", get("BOTFLOW_MAX_CONNECTIONS"), 1000,
                                         "connections"),
            action_allow=action_allow(get("BOTFLOW_ACTION_ALLOW")),
            db_timeout=seconds("BOTFLOW_DB_TIMEOUT", get("BOTFLOW_DB_TIMEOUT"), 5.0),
            start_timeout=seconds("BOTFLOW_START_TIMEOUT", get("BOTFLOW_START_TIMEOUT"), 60.0, zero_ok=True),
            shutdown_timeout=seconds("BOTFLOW_SHUTDOWN_TIMEOUT", get("BOTFLOW_SHUTDOWN_TIMEOUT"), 20.0),
            subscription_check=seconds("BOTFLOW_SUBSCRIPTION_CHECK", get("BOTFLOW_SUBSCRIPTION_CHECK"), 300.0),
            log_format=log_format(get("BOTFLOW_LOG_FORMAT")),
            metrics_token=bootstrap_token(get("BOTFLOW_METRICS_TOKEN"), "BOTFLOW_METRICS_TOKEN"),
            design_workers=whole_number("BOTFLOW_DESIGN_WORKERS", get("BOTFLOW_DESIGN_WORKERS"),
                                        default_design_workers()),
            design_queue=whole_number("BOTFLOW_DESIGN_QUEUE", get("BOTFLOW_DESIGN_QUEUE"), 8),
            secret_key_generated=secret is None,
        )
        return settings


def database_url(value: str) -> str:
    """An async SQLAlchemy URL; plain sqlite:// and postgresql:// are given their async drivers."""
    scheme, sep, rest = value.partition("://")
    if not sep:
        raise SettingsError(
            "BOTFLOW_DATABASE_URL must be a database URL such as sqlite+aiosqlite:///./botflow.db "
            "or postgresql+asyncpg://user@host/db"
        )
    scheme = scheme.lower()
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        return "sqlite+aiosqlite://" + rest
    if scheme in ("postgres", "postgresql", "postgresql+asyncpg"):
        if not rest or rest.startswith("/") and len(rest) == 1:
            raise SettingsError("BOTFLOW_DATABASE_URL must name a PostgreSQL host and database")
        return "postgresql+asyncpg://" + rest
    raise SettingsError(
        f"BOTFLOW_DATABASE_URL must use sqlite+aiosqlite:// or postgresql+asyncpg://, not {scheme}://"
    )


def secrets_key(value: str | None) -> str | None:
    """Comma-separated Fernet keys (urlsafe base64 of 32 bytes each), or None."""
    if value is None:
        return None
    import base64
    import binascii

    for part in (p.strip() for p in value.split(",")):
        try:
            ok = len(base64.urlsafe_b64decode(part.encode("ascii"))) == 32 and len(part) == 44
        except (binascii.Error, UnicodeEncodeError, ValueError):
            ok = False
        if not ok:
            raise SettingsError("BOTFLOW_SECRETS_KEY must be Fernet keys separated by commas; make one with: "
                                "python3 -c \"from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())\"")
    return value


def redis_url(value: str | None, sentinels: str | None = None, master: str | None = None) -> str | None:
    """A redis:// URL (a redis+sentinel:// one, also made of BOTFLOW_REDIS_SENTINELS and _MASTER) or None."""
    if sentinels is not None or master is not None:
        if value is not None or sentinels is None or master is None:
            raise SettingsError("BOTFLOW_REDIS_SENTINELS and BOTFLOW_REDIS_MASTER go together (e.g. "
                                "10.0.0.5:26379,10.0.0.6:26379 and mymaster), instead of BOTFLOW_REDIS_URL")
        value = sentinel.url_of(sentinels, master)
    if value is None:
        return None
    scheme = urlsplit(value).scheme
    if scheme == sentinel.SCHEME:
        try:
            sentinel.parse(value)
        except ValueError as exc:
            raise SettingsError(f"BOTFLOW_REDIS_URL: {exc}") from None
    elif scheme == "redis+cluster":
        try:
            sentinel.cluster_nodes(value)
        except ValueError as exc:
            raise SettingsError(f"BOTFLOW_REDIS_URL: {exc}") from None
    elif scheme not in ("redis", "rediss", "unix"):
        raise SettingsError("BOTFLOW_REDIS_URL must be a redis://, rediss://, redis+sentinel:// or redis+cluster:// "
                            "URL, e.g. redis://127.0.0.1:6379/0, redis+sentinel://10.0.0.5:26379,10.0.0.6:26379/mymaster "
                            "or redis+cluster://10.0.0.5:7000,10.0.0.6:7000")
    return value


@overload
def http_url(name: str, value: str) -> str: ...
@overload
def http_url(name: str, value: str | None) -> str | None: ...
def http_url(name: str, value: str | None) -> str | None:
    """An http(s) URL without a trailing slash, or None."""
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"{name} must be an http:// or https:// URL, e.g. https://bots.example.com")
    return value.rstrip("/")


def bootstrap_token(value: str | None, name: str = "BOTFLOW_BOOTSTRAP_TOKEN") -> str | None:
    """A bearer token: printable ASCII without spaces, long enough to be unguessable."""
    if value is None:
        return None
    if not value.isascii() or not value.isprintable() or " " in value or len(value) > 512:
        raise SettingsError(f"{name} must be printable ASCII without spaces (at most 512 characters)")
    return value


def action_allow(value: str | None) -> tuple[str, ...]:
    """Comma-separated host names or CIDRs that webhook actions may reach although they are internal."""
    from server.egress import Allow

    entries = tuple(e.strip() for e in (value or "").split(",") if e.strip())
    try:
        Allow.parse(entries)
    except ValueError as exc:
        raise SettingsError(f"BOTFLOW_ACTION_ALLOW must be comma-separated host names or networks such as "
                            f"crm.internal,10.0.0.0/8,127.0.0.1; {exc} is neither") from None
    return entries
def seconds(name: str, value: str | None, default: float, *, zero_ok: bool = False) -> float:
    """A duration in seconds: above zero (or zero when allowed), at most a day."""
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not ((0 <= number if zero_ok else 0 < number) and number <= 86400):
        least = "zero or more" if zero_ok else "above zero"
        raise SettingsError(f"{name} must be a number of seconds {least} (at most 86400), e.g. 30; got {value!r}")
    return number


def log_format(value: str | None) -> str | None:
    """"json" or "text"; None lets the server pick (text in a terminal, JSON otherwise)."""
    if value is None:
        return None
    if value.lower() not in ("json", "text"):
        raise SettingsError(f"BOTFLOW_LOG_FORMAT must be json or text; got {value!r}")
    return value.lower()


def positive_number(name: str, value: str | None, default: float) -> float:
    """A finite number above zero."""
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not (0 < number < float("inf")):
        raise SettingsError(f"{name} must be a number above zero, e.g. 30; got {value!r}")
    return number


def positive_int(name: str, value: str | None, default: int, unit: str = "bytes") -> int:
    """A whole number above zero."""
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        example = 1048576 if unit == "bytes" else 1000
        raise SettingsError(f"{name} must be a whole number of {unit} above zero, e.g. {example}; got {value!r}")
    return number


def whole_number(name: str, value: str | None, default: int) -> int:
    """A whole number from 0 to 64."""
    if value is None:
        return default
    if not value.isascii() or not value.isdigit() or not 0 <= int(value) <= 64:
        raise SettingsError(f"{name} must be a whole number from 0 to 64, e.g. 2; got {value!r}")
    return int(value)


def default_design_workers() -> int:
    """One worker per core beyond the one serving webhooks, at least one and at most four."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


def read_dotenv(path: Path = Path(".env")) -> dict[str, str]:
    """KEY=VALUE lines of a .env file (if any); the real environment wins over them."""
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return dict(os.environ)
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        values[key.strip()] = value.strip().strip("'\"")
    return {**values, **os.environ}


def shared_key_needed(settings: Settings) -> None:
    """A server other machines reach (PostgreSQL, a public URL: the production set-up, several replicas)
    must be given BOTFLOW_SECRET_KEY: a key of its own per replica breaks sessions between them."""
    if settings.secret_key_generated and (settings.public_url or not settings.database_url.startswith("sqlite")):
        why = "BOTFLOW_PUBLIC_URL is set" if settings.public_url else "the database is PostgreSQL"
        raise SettingsError(
            f"BOTFLOW_SECRET_KEY must be set when {why} (every replica must sign sessions with the same key); "
            "make one with: python3 -c \"import secrets; print(secrets.token_urlsafe(32))\"")


def settings_or_exit(*, serving: bool = False) -> Settings:
    """Settings for a command-line entry point: a bad value prints its one line and exits with status 2."""
    import sys

    try:
        settings = Settings.from_env(read_dotenv())
        if serving:
            shared_key_needed(settings)
        from server.db.sealed import BOX

        BOX.configure_from(settings)  # commands that read bot secrets (poll, subscribe) decrypt them alike
        return settings
    except SettingsError as exc:
        print(f"botflow: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
