"""Password hashes: argon2id for new ones, older scrypt ones still verified, all work off the event loop."""
from __future__ import annotations

import asyncio
import hashlib
import hmac
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_PASSWORD = 10
MAX_PASSWORD = 1024
# argon2id with OWASP's first recommended setting (19 MiB, 2 passes, 1 lane): a fraction of the memory of
# RFC 9106's profile, so concurrent logins cannot exhaust a small server; hashes with other settings are
# replaced at the next login.
HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
# Hashing gets threads of its own: a burst of logins waits here instead of starving other blocking work.
HASHING = ThreadPoolExecutor(max_workers=2, thread_name_prefix="password-hash")


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a password matched, and whether its stored hash should be replaced by a current one."""

    ok: bool
    rehash: bool = False


def password_problem(password: object) -> str | None:
    """Why `password` cannot be used, as a sentence; None when it can."""
    if not isinstance(password, str):
        return "The password must be text."
    if len(password) < MIN_PASSWORD:
        return f"Choose a password of at least {MIN_PASSWORD} characters."
    if len(password) > MAX_PASSWORD:
        return f"Choose a password of at most {MAX_PASSWORD} characters."
    return None


def _encode(password: str) -> bytes:
    return password.encode("utf-8", "surrogatepass")


def hash_password_blocking(password: str) -> str:
    """An argon2id hash of `password` (takes tens of milliseconds: call hash_password from async code)."""
    return HASHER.hash(_encode(password))


def verify_password_blocking(password: str, stored: str | None) -> Verdict:
    """Check `password` against a stored hash; unknown users are checked against a dummy so both take as long."""
    if not stored:
        _check_argon2(password, dummy_hash())
        return Verdict(False)
    if stored.startswith("scrypt$"):
        return Verdict(_check_scrypt(password, stored), rehash=True)
    if not _check_argon2(password, stored):
        return Verdict(False)
    try:
        return Verdict(True, rehash=HASHER.check_needs_rehash(stored))
    except InvalidHashError:
        return Verdict(True, rehash=True)


async def hash_password(password: str) -> str:
    """hash_password_blocking in a hashing thread, so logins do not stall webhooks."""
    return await asyncio.get_running_loop().run_in_executor(HASHING, hash_password_blocking, password)


async def verify_password(password: str, stored: str | None) -> Verdict:
    """verify_password_blocking in a hashing thread."""
    return await asyncio.get_running_loop().run_in_executor(HASHING, verify_password_blocking, password, stored)


@lru_cache(maxsize=1)
def dummy_hash() -> str:
    """A hash no password is checked to match, with current parameters."""
    return HASHER.hash(b"not a password anybody has")


def _check_argon2(password: str, stored: str) -> bool:
    try:
        return HASHER.verify(stored, _encode(password))
    except (VerificationError, InvalidHashError):
        return False


def _check_scrypt(password: str, stored: str) -> bool:
    """The hashes written before argon2id: "scrypt$n$r$p$salt$hash"."""
    try:
        _, n, r, p, salt, digest = stored.split("$")
        candidate = hashlib.scrypt(_encode(password), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p),
                                   dklen=32, maxmem=256 * 1024 * 1024)
    except (ValueError, TypeError, MemoryError):
        return False
    return hmac.compare_digest(candidate.hex(), digest)


def legacy_scrypt_hash(password: str, salt: bytes) -> str:
    """A hash in the old scrypt form, for tests of the upgrade on login."""
    n, r, p = 2**14, 8, 1
    digest = hashlib.scrypt(_encode(password), salt=salt, n=n, r=r, p=p, dklen=32)
    return f"scrypt${n}${r}${p}${salt.hex()}${digest.hex()}"
