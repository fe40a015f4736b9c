"""A channel's webhook route: `POST /webhooks/<channel>/<bot>`, answered by the runtime's `webhook.answer`."""
from __future__ import annotations

from typing import Any

from litestar import Request, Response, post
from litestar.exceptions import HTTPException

from server import metrics
from server.channels.base import Channel
from server.http_params import PathStr
from server.runtime.lifecycle import runtime_of
from server.runtime.webhook import answer


def webhook_route(channel: Channel) -> Any:
    """`POST /webhooks/<channel>/<bot>`: one delivery, answered by `webhook.answer` (the fast path answers
    the same requests ahead of the router; this serves what it passes on)."""
    header = channel.secret_header

    @post(f"/webhooks/{channel.name}/{{bot_id:str}}", status_code=200, include_in_schema=True,
          summary=f"{channel.title} update delivery", operation_id=f"{channel.name}_webhook")
    async def webhook(request: Request, bot_id: PathStr) -> Response:
        """One update: 200 once handled (replies sent or safely queued) or acknowledged and ignored, 403 bad
        secret, 400 for a body that is not a JSON object, 503 when the storage is unreachable (delivered again)."""
        try:
            status, content = await answer(runtime_of(request.app), bot_id, request.headers.get(header),
                                           request.body)
        except Exception as exc:  # Litestar answers and logs it: its own status (a body over the limit: 413), else 500
            status = exc.status_code if isinstance(exc, HTTPException) else 500
            metrics.WEBHOOK_REQUESTS.labels(bot="-", status=str(status)).inc()
            raise
        return Response(content, status_code=status, media_type="application/json")

    return webhook

