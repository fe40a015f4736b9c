"""The bot page's personal data section: retention, masking, and erasing one user's dialog data."""
from __future__ import annotations

import logging
import re
from typing import Annotated, Any

from litestar import Controller, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from flows.format import DATA_KEY
from flows.masking import INPUT_TYPES
from server.api.bots import bot_changed
from server.api.params import DbSession, PathStr
from server.errors import AppError
from server.services.erasure import erase_user
from server.services import bots as bot_service
from server.services import privacy
from server.runtime.lifecycle import runtime_of
from web.pages import app_error, fragment, refusal, user_of
from web.i18n import gettext as _

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
log = logging.getLogger("botflow.web.privacy")
PARTIAL = "_partials/bot_privacy.html"


def settings_errors(data: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The privacy fields typed into the form, and a sentence per field that is not valid."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    days = (data.get("retention_days") or "").strip()
    if days.isascii() and days.isdigit() and len(days) <= 5 and 1 <= int(days) <= privacy.RETENTION_MAX:
        values["retention_days"] = int(days)
    else:
        errors["retention_days"] = _("Enter a whole number of days from 1 to %(n)s.") % {"n": privacy.RETENTION_MAX}
    keys = [k for k in re.split(r"[\s,;]+", data.get("mask_keys") or "") if k]
    bad = [k for k in keys if len(k) > 64 or not DATA_KEY.fullmatch(k)]
    if bad or len(keys) > privacy.MASK_KEYS_MAX:
        errors["mask_keys"] = _("Data keys are Latin letters, digits and _, not starting with a digit; "
                                "check: %(keys)s.") % {"keys": ", ".join(bad[:5]) or str(len(keys))}
    else:
        values["mask_keys"] = keys
    values["mask_inputs"] = [kind for kind in INPUT_TYPES if data.get(f"mask_{kind}") == "on"]
    return values, errors


class PrivacyController(Controller):
    path = "/bots/{bot_id:str}"
    request_class = HTMXRequest

    @post("/privacy", include_in_schema=False)
    async def save(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "admin")
        if denied:
            return denied
        values, errors = settings_errors(data)
        settings = request.app.state.settings
        try:
            bot = await bot_service.get_bot(db_session, bot_id, settings.public_url)
            if errors:
                return fragment(request, PARTIAL, status=422, bot=bot, errors=errors, can_admin=True, typed=data)
            await bot_service.update_bot(db_session, bot_id, values, user_of(request).username)
            bot = await bot_service.get_bot(db_session, bot_id, settings.public_url)
        except AppError as exc:
            return app_error(request, exc)
        await bot_changed(request, bot_id)
        return fragment(request, PARTIAL, bot=bot, errors={}, can_admin=True, saved=True)

    @post("/erase-user", include_in_schema=False)
    async def erase(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "admin")
        if denied:
            return denied
        raw = (data.get("user_id") or "").strip()
        try:
            bot = await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)
        except AppError as exc:
            return app_error(request, exc)
        if privacy.user_id_problem(raw) is not None:
            return fragment(request, PARTIAL, status=422, bot=bot, can_admin=True, erase_user=raw,
                            errors={"user_id": _("Enter the MAX user id whose data to erase: digits only, "
                                                 "e.g. %(n)s.") % {"n": 212843158}})
        try:
            erased = await erase_user(db_session, runtime_of(request.app).dispatcher, bot_id, raw,
                                      user_of(request).username)
        except AppError as exc:
            return app_error(request, exc)
        # The live dialogs below listen for this: the erased user's dialog leaves the list without a reload.
        return fragment(request, PARTIAL, headers={"HX-Trigger": "dialogs-changed"}, bot=bot, errors={},
                        can_admin=True, erased=erased, erased_user=raw)


ROUTES = [PrivacyController]
