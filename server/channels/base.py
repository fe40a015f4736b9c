"""What the runtime and a channel adapter say to each other: a parsed delivery, an ignored one, a send error."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from flows.dialog import Update

# User ids are signed 64-bit integers in every messenger the runtime speaks (and in its stores).
USER_ID_MAX = 2**63 - 1


class BadUpdate(ValueError):
    """The body is not an update this channel can read (answered with 400)."""


@dataclass(slots=True)
class Incoming:
    """One parsed delivery in the runtime's own words."""

    update: Update
    user: str  # the dialog's owner within the bot
    chat_id: int | None  # where replies go (the dialog this delivery came from)
    dedupe: str  # recognises a redelivery of this very update
    callback_id: str | None = None  # a button press to acknowledge
    # The pressed message as the channel needs it to edit that message's buttons away (opaque here).
    pressed: dict[str, Any] | None = None


@dataclass(slots=True, frozen=True)
class Ignored:
    """A well-formed delivery the runtime acknowledges and does not use; `reason` is a metric label."""

    reason: str


class SendError(Exception):
    """A call to the messenger failed; `retryable` says whether trying again later may succeed."""

    def __init__(self, status: int | None, code: str, message: str, retryable: bool,
                 *, retry_after: float | None = None, unknown: bool = False, prefix: str = "send") -> None:
        super().__init__(f"{prefix} {status if status is not None else 'network'} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retryable = retryable
        # Seconds from a 429's Retry-After header, when the messenger sent one.
        self.retry_after = retry_after
        # The request was written but no answer came: the messenger may have carried it out. Repeating it
        # could send a message twice, so callers do not retry it.
        self.unknown = unknown


class Channel(Protocol):
    """A messenger as the runtime sees it (`server.channels.max.CHANNEL`)."""

    name: str  # the webhook route's segment: /webhooks/<name>/<bot>
    secret_header: str  # the header carrying the bot's webhook secret, in lower case
    secret_title: str  # the same as people write it
    title: str  # the messenger's name as people write it

    def parse(self, raw: Any) -> Incoming | Ignored:
        """The delivery in the runtime's words, or why it is not used; BadUpdate for a body it cannot read."""

    def link(self, settings: Any, files: Any = None) -> Link:
        """The sending side for a runtime: one shared client; `files` holds uploaded pictures."""


class Link(Protocol):
    """A channel's sending side: `await link.send(bot, item)` for an outbox item, `send_message` for a
    one-off message, and `aclose()`."""

    async def send(self, bot: Any, item: dict[str, Any]) -> None: ...

    async def aclose(self) -> None: ...
