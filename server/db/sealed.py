"""Bot tokens and webhook secrets encrypted at rest (Fernet), with the key kept outside the database.

The key is BOTFLOW_SECRETS_KEY (Fernet keys, comma-separated: the first encrypts, every one decrypts, so a
new key goes first and the old one stays until start-up has re-encrypted every row), else one derived from
BOTFLOW_SECRET_KEY, else (a development server with neither) a key file made once in the working directory.
"""
from __future__ import annotations

import base64
import logging
import os
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import Text, text
from sqlalchemy.types import TypeDecorator

log = logging.getLogger("botflow.db")
PREFIX = "fernet:"
KEY_FILE = Path("botflow-secrets.key")
SEALED_COLUMNS = ("token", "webhook_secret")


class SecretsKeyError(ValueError):
    """BOTFLOW_SECRETS_KEY holds something that is not a Fernet key."""


def derived_key(secret: str) -> bytes:
    """A Fernet key from BOTFLOW_SECRET_KEY (HKDF-SHA256, its own purpose, so neither key reveals the other)."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"botflow secrets at rest").derive(
        secret.encode())
    return base64.urlsafe_b64encode(raw)


def file_key(path: Path = KEY_FILE) -> bytes:
    """The development key file's key, made (readable by this user only) when there is none."""
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        key = Fernet.generate_key()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key + b"\n")
        log.warning("neither BOTFLOW_SECRETS_KEY nor BOTFLOW_SECRET_KEY is set: bot tokens are encrypted with a "
                    "key kept in %s", path.resolve())
        return key


def keys_for(secrets_key: str | None, secret_key: str, secret_key_generated: bool) -> list[bytes]:
    """The keys in order of use: the first encrypts."""
    if secrets_key:
        listed = [part.strip().encode() for part in secrets_key.split(",") if part.strip()]
        # The key derived from BOTFLOW_SECRET_KEY still opens what was sealed before BOTFLOW_SECRETS_KEY was set.
        return listed if secret_key_generated else listed + [derived_key(secret_key)]
    if secret_key_generated:
        return [file_key()]
    return [derived_key(secret_key)]


class Box:
    """The process's keys; every key configured stays able to decrypt (tests run apps with several keys)."""

    def __init__(self) -> None:
        self.keys: list[bytes] = []
        self.fernet: MultiFernet | None = None
        self.pending: Any = None  # settings whose keys are read at first use (a key file is made only then)

    def configure_from(self, settings: Any) -> None:
        """Use the keys `settings` name, from the first secret sealed or opened on."""
        self.pending = settings

    def _ready(self) -> MultiFernet:
        if self.pending is not None:
            settings, self.pending = self.pending, None
            self.configure(keys_for(settings.secrets_key, settings.secret_key, settings.secret_key_generated))
        assert self.fernet is not None, "secrets box used before the app configured it"
        return self.fernet

    def configure(self, keys: list[bytes]) -> None:
        try:
            fernets = [Fernet(key) for key in keys]
        except (ValueError, TypeError):
            raise SecretsKeyError("BOTFLOW_SECRETS_KEY must be Fernet keys separated by commas; make one with: "
                                  "python3 -c \"from cryptography.fernet import Fernet; "
                                  "print(Fernet.generate_key().decode())\"") from None
        self.keys = keys + [k for k in self.keys if k not in keys]
        self.fernet = MultiFernet(fernets + [Fernet(k) for k in self.keys[len(keys):]])
        self.primary = keys[0]

    def seal(self, value: str) -> str:
        return PREFIX + self._ready().encrypt(value.encode()).decode("ascii")

    def open(self, stored: str) -> str | None:
        """The value in clear: a sealed one decrypted (None when no key fits), a value from before as it is."""
        if not stored.startswith(PREFIX):
            return stored
        try:
            return self._ready().decrypt(stored[len(PREFIX):].encode()).decode()
        except InvalidToken:
            log.error("a bot secret was encrypted with a key this server does not have; check BOTFLOW_SECRETS_KEY "
                      "(the old key must stay listed until start-up has re-encrypted every row)")
            return None

    def current(self, stored: str) -> bool:
        """Whether a stored value is sealed with the key that encrypts now."""
        if not stored.startswith(PREFIX):
            return False
        self._ready()
        try:
            Fernet(self.primary).decrypt(stored[len(PREFIX):].encode())
            return True
        except InvalidToken:
            return False


BOX = Box()


class Sealed(TypeDecorator[str]):
    """Text stored encrypted: callers read and write the clear value."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else BOX.seal(value)

    def process_result_value(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else BOX.open(value)


async def seal_stored(db: Any) -> int:
    """Encrypt every bot secret still in clear (rows from before encryption) and re-encrypt those under an
    older key (rotation); returns how many values changed. Safe to run on several replicas at once."""
    async with db.engine.connect() as conn:
        rows = (await conn.execute(text("SELECT id, token, webhook_secret FROM bots"))).all()
    changed = 0
    for row in rows:
        values, was = {}, {}
        for column in SEALED_COLUMNS:
            stored = getattr(row, column)
            if stored is None or BOX.current(stored):
                continue
            clear = BOX.open(stored)
            if clear is not None:
                values[column], was[f"was_{column}"] = BOX.seal(clear), stored
        if not values:
            continue
        # One short transaction per row that starts by writing, and only over the value read: replicas that
        # start together wait for each other's write (SQLite refuses a transaction that read first and then
        # writes while another writes, it does not wait), and a row another replica sealed meanwhile stays.
        sets = ", ".join(f"{name} = :{name}" for name in values)
        same = " AND ".join(f"{name} = :was_{name}" for name in values)
        async with db.engine.begin() as conn:
            done = await conn.execute(text(f"UPDATE bots SET {sets} WHERE id = :id AND {same}"),
                                      {**values, **was, "id": row.id})
        if done.rowcount:
            changed += len(values)
    if changed:
        log.info("encrypted %d bot secrets with the current key", changed)
    return changed
