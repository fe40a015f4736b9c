"""HTTP routes of the runtime: the MAX webhook, plus the inspection routes from `inspect`."""
from __future__ import annotations

from litestar import Request, Response, post
from litestar.exceptions import HTTPException

from server import metrics
from server.http_params import PathStr
from server.runtime.erasure import ROUTES as ERASURE_ROUTES
from server.runtime.funnel_api import ROUTES as FUNNEL_ROUTES
from server.runtime.inspect import ROUTES as INSPECT_ROUTES
from server.runtime.live_dialogs import ROUTES as LIVE_ROUTES
from server.runtime.webhook import SECRET_HEADER, answer


@post("/webhooks/max/{bot_id:str}", status_code=200, include_in_schema=True, summary="MAX update delivery")
async def max_webhook(request: Request, bot_id: PathStr) -> Response:
    """One MAX update: 200 once handled (replies sent or safely queued), 403 bad secret, 400 bad body,
    503 when the storage is unreachable (MAX then delivers again)."""
    try:
        status, content = await answer(request.app.state.runtime, bot_id, request.headers.get(SECRET_HEADER),
                                       request.body)
    except Exception as exc:  # Litestar answers and logs it: its own status (a body over the limit: 413), else 500
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        metrics.WEBHOOK_REQUESTS.labels(bot="-", status=str(status)).inc()
        raise
    return Response(content, status_code=status, media_type="application/json")


ROUTES = [max_webhook, *INSPECT_ROUTES, *LIVE_ROUTES, *ERASURE_ROUTES, *FUNNEL_ROUTES]
