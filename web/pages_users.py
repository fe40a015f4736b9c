"""People: admins add users and set their roles; everyone changes their own password and API tokens."""
from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, get, post
from litestar.enums import MediaType, RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from server.api.params import DbSession, PathInt, PathStr
from server.auth import ROLES, CurrentUser, login_session
from server.errors import AppError
from server.passwords import MAX_PASSWORD
from server.services import tokens as token_service
from server.services import users as user_service
from web.i18n import N_, role_name
from web.i18n import gettext as _
from web.messages import human_message
from web.pages import app_error, fragment, problem, redirect, refusal, render, user_of
from web.pages_auth import password_words

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
ROLE_HINTS = {"viewer": N_("sees flows, versions and bots"), "editor": N_("also changes drafts"),
              "publisher": N_("also freezes versions and publishes"), "admin": N_("also manages bots and people")}
LIFETIMES = {"": None, "30": 30, "90": 90, "365": 365}  # days; "" never expires
LIFETIME_NAMES = {"": N_("never expires"), "30": N_("30 days"), "90": N_("90 days"), "365": N_("a year")}
TOKEN_CHANGED = {"HX-Trigger": "tokens-changed"}
# The labels the server gives tokens nobody named.
TOKEN_LABELS = {token_service.CREATED_LABEL: N_("made with the account"), token_service.DEFAULT_LABEL: N_("unnamed"),
                token_service.BOOTSTRAP_LABEL: N_("bootstrap token")}


def role_options() -> list[tuple[str, str]]:
    return [(role, f"{role_name(role)}: {_(ROLE_HINTS[role])}") for role in ROLES]


def lifetime_options() -> list[tuple[str, str]]:
    return [(key, _(name)) for key, name in LIFETIME_NAMES.items()]


def shown_token(token: dict[str, Any]) -> dict[str, Any]:
    """A listed token with its name as the page shows it; the server's own (bootstrap) is not revoked here."""
    label = token["label"]
    return {**token, "shown": _(TOKEN_LABELS[label]) if label in TOKEN_LABELS else label,
            "fixed": label == token_service.BOOTSTRAP_LABEL}


def itself(request: HTMXRequest, username: str) -> bool:
    return user_of(request).username.lower() == username.lower()


def not_yours(request: HTMXRequest, username: str) -> Template | None:
    """A 403 unless the signed-in user is `username` or an admin."""
    if itself(request, username):
        return None
    return refusal(request, "admin")


async def account(request: HTMXRequest, db_session: DbSession, username: str) -> dict[str, Any]:
    """What a user's page shows: the account and its tokens (never a token's value)."""
    row = await user_service.get_user(db_session, username)
    return {"person": {"username": row.username, "role": row.role, "has_password": row.password_hash is not None,
                       "created_at": row.created_at},
            "tokens": [shown_token(t) for t in await token_service.listed(db_session, row)],
            "is_self": itself(request, row.username),
            "can_admin": user_of(request).has_role("admin"), "roles": role_options(),
            "lifetimes": lifetime_options(), "max_password": MAX_PASSWORD}


class UsersController(Controller):
    path = "/users"
    request_class = HTMXRequest

    @get("/", include_in_schema=False, media_type=MediaType.HTML)
    async def index(self, request: HTMXRequest, db_session: DbSession) -> Any:
        me = user_of(request)
        if not me.has_role("admin"):
            return redirect(request, f"/users/{me.username}")
        return render(request, "users.html", "_partials/users_table.html", section="users",
                      people=await user_service.list_users(db_session), roles=role_options(),
                      errors={}, values={"role": "editor"})

    @post("/", include_in_schema=False)
    async def create(self, request: HTMXRequest, db_session: DbSession, data: Form) -> Template:
        denied = refusal(request, "admin")
        if denied:
            return denied
        values = {"username": (data.get("username") or "").strip(), "role": data.get("role") or "",
                  "password": data.get("password") or ""}
        errors: dict[str, str] = {}
        try:
            user_service.check_username(values["username"])
        except AppError as exc:  # the service's rule, in its own words
            errors["username"] = human_message(exc)
        if values["role"] not in ROLES:
            errors["role"] = _("Choose one of the roles.")
        words = password_words(values["password"]) if values["password"] else None  # none: API-only account
        if words:
            errors["password"] = words
        if not errors:
            try:
                # Someone who logs in with a password makes their own API tokens, if they want any; only an
                # API-only account gets one here (a credential nobody asked for would otherwise lie around).
                created, token = await user_service.create_user(db_session, values["username"], values["role"],
                                                                values["password"] or None, user_of(request).username,
                                                                with_token=not values["password"])
            except AppError as exc:
                if exc.code != "user_exists":
                    return app_error(request, exc)
                errors["username"] = human_message(exc)
            else:
                return fragment(request, "_partials/user_new.html", roles=role_options(), errors={},
                                values={"role": values["role"]}, created={"username": created.username,
                                                                           "role": created.role, "token": token},
                                headers={"HX-Trigger": "users-changed", "Cache-Control": "no-store"})
        values.pop("password")  # never sent back into the page
        return fragment(request, "_partials/user_new.html", status=422, roles=role_options(), errors=errors,
                        values=values)

    @get("/{username:str}", include_in_schema=False)
    async def detail(self, request: HTMXRequest, db_session: DbSession, username: PathStr) -> Template:
        denied = not_yours(request, username)
        if denied:
            return denied
        try:
            shown = await account(request, db_session, username)
        except AppError as exc:
            return app_error(request, exc)
        return render(request, "user.html", "_partials/user_tokens.html",
                      section="users" if not shown["is_self"] else "account", errors={}, **shown)

    @post("/{username:str}/role", include_in_schema=False, media_type=MediaType.HTML, status_code=200)
    async def change_role(self, request: HTMXRequest, db_session: DbSession, username: PathStr,
                          data: Form) -> Any:
        denied = refusal(request, "admin")
        if denied:
            return denied
        role = data.get("role") or ""
        if role not in ROLES:
            return problem(request, _("Choose one of the roles."), status=422)
        try:
            changed = await user_service.update_user(db_session, username, role, user_of(request).username)
        except AppError as exc:
            return app_error(request, exc)
        if itself(request, username) and role != "admin":
            return redirect(request, f"/users/{changed['username']}")  # this page's admin parts are gone
        return fragment(request, "_partials/user_saved.html",
                        message=_("%(name)s is now %(role)s.") % {"name": changed["username"],
                                                                   "role": role_name(changed["role"])})

    @post("/{username:str}/password", include_in_schema=False, status_code=200)
    async def change_password(self, request: HTMXRequest, db_session: DbSession, username: PathStr,
                              data: Form) -> Template:
        denied = not_yours(request, username)
        if denied:
            return denied
        mine = itself(request, username)
        new, errors = data.get("password") or "", {}
        try:
            row = await user_service.get_user(db_session, username)
        except AppError as exc:
            return app_error(request, exc)
        if words := password_words(new):
            errors["password"] = words
        else:
            try:
                row = await user_service.change_password(db_session, user_of(request), row.username, new,
                                                         data.get("current") or "")
            except user_service.WrongPassword:
                errors["current"] = _("That is not your current password.")
            except AppError as exc:
                return app_error(request, exc)
        if errors:
            return fragment(request, "_partials/user_password.html", status=422, errors=errors, mine=mine,
                            person={"username": row.username, "has_password": row.password_hash is not None},
                            max_password=MAX_PASSWORD)
        if mine and request.scope.get("auth") == "session":
            login_session(request, CurrentUser(row.id, row.username, row.role, row.session_version))
        message = (_("Your password is changed; your other browser sessions have ended.") if mine else
                   _("The password of %(name)s is changed; their browser sessions have ended.")
                   % {"name": row.username})
        return fragment(request, "_partials/user_password.html", errors={}, mine=mine, saved=message,
                        person={"username": row.username, "has_password": True}, max_password=MAX_PASSWORD)

    @post("/{username:str}/tokens", include_in_schema=False)
    async def new_token(self, request: HTMXRequest, db_session: DbSession, username: PathStr,
                        data: Form) -> Template:
        denied = not_yours(request, username)
        if denied:
            return denied
        label = (data.get("label") or "").strip() or token_service.DEFAULT_LABEL
        lifetime = data.get("lifetime") or ""
        errors: dict[str, str] = {}
        if not token_service.usable_label(label):
            errors["label"] = _("Name the token in at most 64 characters (not “bootstrap”).")
        if lifetime not in LIFETIMES:
            errors["lifetime"] = _("Choose how long the token works.")
        if errors:
            return fragment(request, "_partials/user_token_new.html", status=422, errors=errors, username=username,
                            lifetimes=lifetime_options(), values={"label": label, "lifetime": lifetime})
        try:
            owner = await user_service.get_user(db_session, username)
            days = LIFETIMES[lifetime]
            expires = token_service.expiry(days * 86400) if days else None
            expires = token_service.within_scope(user_of(request), owner, expires)
            issued = await token_service.issue(db_session, owner, user_of(request).username, label, expires)
        except AppError as exc:
            return app_error(request, exc)
        return fragment(request, "_partials/user_token_new.html", errors={}, username=owner.username,
                        lifetimes=lifetime_options(), values={"label": "", "lifetime": ""}, issued=issued,
                        headers={**TOKEN_CHANGED, "Cache-Control": "no-store"})

    @post("/{username:str}/tokens/{token_id:int}/revoke", include_in_schema=False, status_code=200,
          media_type=MediaType.HTML)
    async def revoke(self, request: HTMXRequest, db_session: DbSession, username: PathStr,
                     token_id: PathInt) -> Any:
        denied = not_yours(request, username)
        if denied:
            return denied
        try:
            owner = await user_service.get_user(db_session, username)
            await token_service.revoke(db_session, owner, token_id, user_of(request).username)
            shown = await account(request, db_session, owner.username)
        except AppError as exc:
            return app_error(request, exc)
        return fragment(request, "_partials/user_tokens.html", errors={}, **shown)

    @post("/{username:str}/remove", include_in_schema=False, media_type=MediaType.HTML, status_code=200)
    async def remove(self, request: HTMXRequest, db_session: DbSession, username: PathStr) -> Response:
        denied = refusal(request, "admin")
        if denied:
            return denied
        try:
            await user_service.delete_user(db_session, username, user_of(request).username)
        except AppError as exc:
            return app_error(request, exc)
        return redirect(request, "/login" if itself(request, username) else "/users")


ROUTES = [UsersController]
