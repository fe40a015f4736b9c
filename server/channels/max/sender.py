"""Outbox items → MAX calls, over one shared keep-alive client."""
from __future__ import annotations

import logging
from typing import Any

from flows.dialog import Reply
from server.channels.base import Link
from server.channels.max.client import SEND_TIMEOUT, MaxApiError, MaxClient
from server.channels.max.render import answer_body, message_body, pressed_body
from server.channels.max.uploads import Files, MaxUploads
from server.channels.transport import LeanClient

log = logging.getLogger("botflow.channels.max.sender")


class MaxSender:
    """Turns outbox items into MAX calls; an uploaded picture is uploaded once per bot (`uploads`)."""

    def __init__(self, client: MaxClient, uploads: MaxUploads | None = None) -> None:
        self.client = client
        self.uploads = uploads

    async def __call__(self, bot: Any, item: dict[str, Any]) -> None:
        if not bot.token:
            raise MaxApiError(None, "no.token", f"bot {bot.id} has no token", False)
        if item["op"] == "answer":
            edit = item.get("edit")
            body = answer_body(item.get("notification"), pressed_body(edit) if edit is not None else None)
            await self.client.answer_callback(bot.token, item["callback_id"], body, answer=False)
            return
        reply = Reply(item["text"], item.get("buttons") or [], item.get("format"), item.get("image"),
                      item.get("upload"))
        picture = await self._picture(bot, reply.upload) if reply.upload else None
        body = message_body(reply, picture)
        if item.get("chat_id") is not None:
            await self.client.send_message(bot.token, chat_id=item["chat_id"], body=body, answer=False)
        else:
            await self.client.send_message(bot.token, user_id=item["user_id"], body=body, answer=False)

    async def _picture(self, bot: Any, upload_id: str) -> str | None:
        """The bot's token for an uploaded picture; a picture no longer stored is left out (the text still goes)."""
        token = await self.uploads.token(bot.id, bot.token, upload_id) if self.uploads is not None else None
        if token is None:
            log.warning("the uploaded picture %s is not stored; the message goes without it", upload_id,
                        extra={"event": "send", "bot": bot.id, "outcome": "picture_missing"})
        return token


class MaxLink:
    """A runtime's way to MAX: the lean keep-alive transport, a client on it, and the sender."""

    def __init__(self, base_url: str, files: Files | None = None) -> None:
        self.http = LeanClient(timeout=SEND_TIMEOUT)
        # The bot's rate is kept by the outbox (shared across replicas through Redis), not per client.
        self.client = MaxClient(base_url, rate=None, client=self.http)  # type: ignore[arg-type]
        self.uploads = MaxUploads(self.client, files) if files is not None else None
        self.send = MaxSender(self.client, self.uploads)

    async def aclose(self) -> None:
        if self.uploads is not None:
            await self.uploads.aclose()
        await self.client.aclose()
        await self.http.aclose()


def max_client_of(link: Link) -> MaxClient:
    """The MAX client under a runtime's link, for the subscription checks and the bot page's test message."""
    if not isinstance(link, MaxLink):
        raise TypeError(f"the runtime's link is {type(link).__name__}, not MAX's")
    return link.client
