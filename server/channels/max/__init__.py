"""The MAX messenger: its updates parsed (`updates`), replies rendered (`render`), the client (`client`) and
its sending (`sender`), subscriptions and their watchdog, long polling, and a fake MAX (`fake`)."""
from __future__ import annotations

from typing import Any

from server.channels.base import Ignored, Incoming
from server.channels.max.updates import parse_update


class MaxChannel:
    """MAX as the runtime sees it (`server.channels.base.Channel`)."""

    name = "max"
    secret_header = "x-max-bot-api-secret"
    secret_title = "X-Max-Bot-Api-Secret"
    title = "MAX"

    @staticmethod
    def parse(raw: Any) -> Incoming | Ignored:
        """The runtime's update of one MAX delivery, or why it is not used."""
        return parse_update(raw)

    @staticmethod
    def link(settings: Any, files: Any = None) -> Any:
        """The sending side: one keep-alive client to `settings.max_api_url`, rate kept by the outbox;
        `files` holds uploaded pictures and each bot's token for them."""
        from server.channels.max.sender import MaxLink

        return MaxLink(settings.max_api_url, files)


CHANNEL = MaxChannel()
