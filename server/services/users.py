"""Users and roles: accounts, the first-run administrator, logins, the last-admin rule."""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server.auth import ROLES, CurrentUser, hash_token
from server.db.models import TokenRow, UserRow
from server.errors import N_, Conflict, Forbidden, NotFound, Unprocessable
from server.passwords import MAX_PASSWORD, hash_password, password_problem, verify_password
from server.services import audit, logins
from server.services.common import USERNAME, iso
from server.services.tokens import BOOTSTRAP_LABEL, CREATED_LABEL, add_token

BOOTSTRAP_USER = "admin"


def check_username(username: Any) -> str:
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        raise Unprocessable.worded(
            N_("username must be 1-64 characters of Latin letters, digits, '_', '.', '@' or '-', starting with a "
               "letter or digit."), {}, details=[{"path": "username", "message": N_("not a valid username")}])
    return username


def user_exists(username: str) -> Conflict:
    return Conflict.worded(N_("A user named '%(name)s' already exists (names ignore letter case)."),
                           {"name": username}, code="user_exists")


def check_role(role: Any) -> str:
    if role not in ROLES:
        raise Unprocessable(f"role must be one of {', '.join(ROLES)}.",
                            details=[{"path": "role", "message": "unknown role"}])
    return role


def check_password(password: Any) -> str:
    """A usable password, or a 422 with the rule it breaks."""
    problem = password_problem(password)
    if problem:
        raise Unprocessable(problem, details=[{"path": "password", "message": problem}])
    return password


async def find_user(session: AsyncSession, username: str) -> UserRow | None:
    """The user of that name in any letter case (names are unique case-insensitively), or None."""
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        return None
    return (await session.execute(
        select(UserRow).where(func.lower(UserRow.username) == username.lower()))).scalar_one_or_none()


async def create_user(session: AsyncSession, username: str, role: str, password: str | None,
                      actor: str | None, *, with_token: bool = True) -> tuple[UserRow, str | None]:
    """A new user and (unless `with_token` is false) their first API token, returned in clear this once."""
    check_username(username)
    check_role(role)
    if password is not None:
        check_password(password)
    if await find_user(session, username) is not None:
        raise user_exists(username)
    user = UserRow(username=username, role=role, password_hash=await hash_password(password) if password else None)
    session.add(user)
    try:
        await session.flush()
        token = add_token(session, user, CREATED_LABEL)[1] if with_token else None
        audit.record(session, actor, "user.create", f"user:{username}", role=role)
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise user_exists(username) from None
    return user, token


async def list_users(session: AsyncSession) -> list[dict[str, Any]]:
    """Usernames and roles, alphabetically."""
    rows = (await session.execute(select(UserRow).order_by(UserRow.username))).scalars().all()
    return [{"username": r.username, "role": r.role, "created_at": iso(r.created_at)} for r in rows]


async def get_user(session: AsyncSession, username: str) -> UserRow:
    row = await find_user(session, username)
    if row is None:
        raise NotFound.worded(N_("There is no user '%(name)s'."), {"name": username})
    return row


async def can_set_up(session: AsyncSession, bootstrap_configured: bool) -> bool:
    """Whether the login page may create the first admin."""
    # No user at all, or only the passwordless bootstrap admin while BOTFLOW_BOOTSTRAP_TOKEN is set (the
    # form then asks for that token). Any other user, even one without a password, closes the form for good.
    rows = (await session.execute(select(UserRow.username, UserRow.password_hash).limit(2))).all()
    if not rows:
        return True
    return bootstrap_configured and len(rows) == 1 and rows[0].username == BOOTSTRAP_USER \
        and rows[0].password_hash is None


async def set_up_admin(session: AsyncSession, username: str, password: str,
                       bootstrap_configured: bool) -> CurrentUser:
    """The first account that can log in: an admin (the bootstrap admin gets a password, or a new user)."""
    check_username(username)
    check_password(password)
    if not await can_set_up(session, bootstrap_configured):
        raise Conflict("This server has its accounts already; ask an admin for one.", code="already_set_up")
    existing = await find_user(session, username)
    if existing is None:
        user, _ = await create_user(session, username, "admin", password, actor=None)
        return CurrentUser(user.id, user.username, user.role, user.session_version)
    existing.role = "admin"
    existing.password_hash = await hash_password(password)
    audit.record(session, None, "user.set_up", f"user:{existing.username}")
    await session.commit()
    return CurrentUser(existing.id, existing.username, existing.role, existing.session_version)


async def authenticate(session: AsyncSession, username: str, password: str,
                       client: str | None = None) -> CurrentUser | None:
    """The user whose password this is (for the login form), or None; TooManyAttempts past the limit."""
    # An unknown name is checked against a dummy hash (verify_password), so it answers as slowly as a known one.
    counters = logins.keys(username if isinstance(username, str) else "", client)
    await logins.check(session, counters)
    row = await find_user(session, username)
    # No stored password is longer than MAX_PASSWORD, so one character more keeps a megabyte guess cheap.
    password = password[:MAX_PASSWORD + 1]
    verdict = await verify_password(password, row.password_hash if row is not None else None)
    if row is None or not verdict.ok:
        await logins.record_failure(session, counters)
        return None
    await logins.forget(session, counters[0])
    if verdict.rehash:
        row.password_hash = await hash_password(password)
    await session.commit()
    return CurrentUser(row.id, row.username, row.role, row.session_version)


async def end_sessions(session: AsyncSession, user_id: int) -> int:
    """Invalidate every browser session of a user (logout, password change); returns the new version."""
    await session.execute(update(UserRow).where(UserRow.id == user_id)
                          .values(session_version=UserRow.session_version + 1))
    await session.commit()
    return (await session.execute(select(UserRow.session_version).where(UserRow.id == user_id))).scalar_one()


LAST_ADMIN = {"demote": N_("'%(name)s' is the only admin; make another user admin before demoting them."),
              "remove": N_("'%(name)s' is the only admin; make another user admin before removing them.")}


async def lock_admins(session: AsyncSession) -> set[int]:
    """The ids of today's admins, with every admin row held until the caller's transaction ends.

    Two admins demoting or removing each other at once must not both see "another admin is left": on
    PostgreSQL the rows are locked (FOR UPDATE, in id order, so two callers never deadlock); SQLite has
    one writer at a time, and a write taken first makes this transaction that writer before it counts.
    """
    if session.get_bind().dialect.name == "sqlite":
        await session.execute(update(UserRow).where(UserRow.role == "admin").values(role=UserRow.role))
        rows = await session.execute(select(UserRow.id).where(UserRow.role == "admin"))
    else:
        rows = await session.execute(select(UserRow.id).where(UserRow.role == "admin")
                                     .order_by(UserRow.id).with_for_update())
    return set(rows.scalars().all())


async def keep_an_admin(session: AsyncSession, user: UserRow, doing: str) -> None:
    """Refuse to remove or demote (`doing`) the only admin: nobody could manage users or bots afterwards."""
    name, admins = user.username, await lock_admins(session)
    if user.id in admins and len(admins) <= 1:
        await session.rollback()  # the admin rows stay locked no longer than needed
        raise Conflict.worded(LAST_ADMIN[doing], {"name": name}, code="last_admin")


async def update_user(session: AsyncSession, username: str, role: str, actor: str | None) -> dict[str, Any]:
    """Change a user's role (never the last admin's away from admin)."""
    user = await get_user(session, username)
    check_role(role)
    if role != "admin":
        await keep_an_admin(session, user, "demote")
    user.role = role
    audit.record(session, actor, "user.update", f"user:{user.username}", fields=["role"])
    await session.commit()
    return {"username": user.username, "role": user.role, "created_at": iso(user.created_at)}


class WrongPassword(Unprocessable):
    """Changing one's own password needs the current one, and this is not it (or it is missing)."""

    def __init__(self) -> None:
        message = "Give your current password in current_password to change it."
        super().__init__(message, code="wrong_password", details=[{"path": "current_password", "message": message}])


async def change_password(session: AsyncSession, caller: CurrentUser, username: str, new: Any,
                          current: Any) -> UserRow:
    """The one rule for every path that sets a password; ends the user's browser sessions.

    Your own password changes only in a browser session and with the current one (a leaked API token, or
    an unattended browser, must not become the account); an admin sets anyone else's.
    """
    mine = caller.username.lower() == username.lower()
    if mine and caller.token_id is not None:
        raise Forbidden("An API token cannot change its own account's password; change it on your page in the "
                        "browser, with the current one.", code="token_scope")
    if not mine and not caller.has_role("admin"):
        raise Forbidden("Only an admin can change someone else's password.")
    user = await get_user(session, username)
    if mine and user.password_hash is not None:
        # An unattended browser must not be enough to lock its owner out.
        given = current[:MAX_PASSWORD + 1] if isinstance(current, str) else ""
        if not (await verify_password(given, user.password_hash)).ok:
            raise WrongPassword()
    user.password_hash = await hash_password(check_password(new))
    user.session_version = user.session_version + 1
    audit.record(session, caller.username, "user.update", f"user:{user.username}", fields=["password"])
    await session.commit()
    return user


async def delete_user(session: AsyncSession, username: str, actor: str | None) -> None:
    """Remove a user and every token of theirs."""
    user = await get_user(session, username)
    await keep_an_admin(session, user, "remove")
    await session.execute(delete(TokenRow).where(TokenRow.user_id == user.id))
    await session.delete(user)
    audit.record(session, actor, "user.delete", f"user:{user.username}")
    await session.commit()


async def ensure_bootstrap(session: AsyncSession, token: str) -> None:
    """Make `token` a valid admin token (BOTFLOW_BOOTSTRAP_TOKEN), replacing the previous bootstrap token."""
    digest = hash_token(token)
    for attempt in range(3):  # replicas starting together may race on the same rows
        try:
            user = (await session.execute(
                select(UserRow).where(func.lower(UserRow.username) == BOOTSTRAP_USER))).scalar_one_or_none()
            if user is None:
                user = UserRow(username=BOOTSTRAP_USER, role="admin")
                session.add(user)
                await session.flush()
            elif user.role != "admin":
                user.role = "admin"
            existing = (await session.execute(
                select(TokenRow).where(TokenRow.token_hash == digest))).scalar_one_or_none()
            if existing is not None and existing.user_id == user.id and existing.label == BOOTSTRAP_LABEL:
                await session.commit()
                return
            await session.execute(delete(TokenRow).where(
                (TokenRow.label == BOOTSTRAP_LABEL) | (TokenRow.token_hash == digest)))
            session.add(TokenRow(user_id=user.id, token_hash=digest, label=BOOTSTRAP_LABEL))
            audit.record(session, None, "user.bootstrap_token", f"user:{BOOTSTRAP_USER}")
            await session.commit()
            return
        except IntegrityError:
            await session.rollback()
            if attempt == 2:
                raise
