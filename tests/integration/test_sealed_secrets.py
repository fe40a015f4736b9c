"""Bot tokens and webhook secrets are encrypted at rest with a key outside the database; rows from before are
encrypted at start-up, and a new key takes over from the old one."""
from __future__ import annotations

from cryptography.fernet import Fernet
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.engine import make_engine
from server.db.models import BotRow
from server.db.sealed import PREFIX
from tests.integration.test_accounts import run_sql

BOT = {"id": "vault", "title": "Vault", "token": "max-token-IN-CLEAR", "webhook_secret": "hook_secret_in_clear"}


async def bot_token(database_url: str) -> tuple[str | None, str | None]:
    """The bot's secrets read through the model, as the server reads them (an engine of the test's own loop)."""
    engine = make_engine(database_url)
    try:
        async with AsyncSession(engine) as session:
            row = await session.get(BotRow, "vault")
            return row.token, row.webhook_secret
    finally:
        await engine.dispose()


async def stored(database_url: str, column: str) -> str:
    return await run_sql(database_url, text(f"SELECT {column} FROM bots WHERE id = 'vault'"))


async def test_bot_secrets_never_reach_the_database_in_clear(app_client, admin_headers, database_url):
    assert (await app_client.post("/api/bots", json=BOT, headers=admin_headers)).status_code == 201
    for column, clear in (("token", BOT["token"]), ("webhook_secret", BOT["webhook_secret"])):
        value = await stored(database_url, column)
        assert value.startswith(PREFIX) and clear not in value
    assert await bot_token(database_url) == (BOT["token"], BOT["webhook_secret"])
    changed = await app_client.patch("/api/bots/vault", json={"token": "a-new-token"}, headers=admin_headers)
    assert changed.status_code == 200
    assert "a-new-token" not in await stored(database_url, "token")


async def test_rows_from_before_are_encrypted_at_start_up_and_a_new_key_takes_over(make_app, database_url):
    await run_sql(database_url, text("INSERT INTO bots (id, title, token, webhook_secret, require_tests, retention_days,"
                                     " mask_keys, mask_inputs, created_at, updated_at) VALUES ('vault', '', "
                                     "'old-plain-token', 'old_plain_secret', false, 30, '[]', '[]', "
                                     "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    async with AsyncTestClient(app=make_app(secrets_key=old)):
        pass
    sealed = await stored(database_url, "token")
    assert sealed.startswith(PREFIX) and Fernet(old).decrypt(sealed[len(PREFIX):].encode()) == b"old-plain-token"
    # Rotation: the new key first, the old one still listed; start-up re-encrypts every row with the new one.
    app = make_app(secrets_key=f"{new},{old}")
    async with AsyncTestClient(app=app):
        pass
    assert await bot_token(database_url) == ("old-plain-token", "old_plain_secret")
    for column, clear in (("token", b"old-plain-token"), ("webhook_secret", b"old_plain_secret")):
        value = await stored(database_url, column)
        assert Fernet(new).decrypt(value[len(PREFIX):].encode()) == clear  # the old key is no longer needed


async def test_replicas_starting_together_seal_every_row_once_and_none_fails(database_url):
    import asyncio
    from types import SimpleNamespace

    from server.db.sealed import BOX, seal_stored

    values = ", ".join(f"('v{n}', '', 'plain-token-{n}', 'plain_secret_{n}', false, 30, '[]', '[]', "
                       "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)" for n in range(40))
    await run_sql(database_url, text("INSERT INTO bots (id, title, token, webhook_secret, require_tests, "
                                     f"retention_days, mask_keys, mask_inputs, created_at, updated_at) VALUES {values}"))
    key = Fernet.generate_key()
    saved = dict(vars(BOX))  # the box is the process's: other tests' apps keep theirs afterwards
    BOX.configure([key])
    engines = [make_engine(database_url) for _ in range(3)]
    try:
        changed = await asyncio.gather(*(seal_stored(SimpleNamespace(engine=e)) for e in engines))
    finally:
        for engine in engines:
            await engine.dispose()
        vars(BOX).clear()
        vars(BOX).update(saved)
    assert sum(changed) == 80, changed  # every value sealed by exactly one of them
    for n in (0, 17, 39):
        token = await run_sql(database_url, text(f"SELECT token FROM bots WHERE id = 'v{n}'"))
        assert Fernet(key).decrypt(token[len(PREFIX):].encode()) == f"plain-token-{n}".encode()
