"""The fake MAX's uploads: `POST /uploads?type=` hands out an upload URL, the bytes go there as multipart
`data`, and the token it answers is refused with `attachment.not.ready` for a while, as real MAX does."""
from __future__ import annotations

import itertools
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from server.channels.max.fake.protocol import Invalid

UPLOAD_TYPES = ("image", "video", "audio", "file")
UPLOAD_PATH = "/upload/"
# How long a token stays "not ready" after its upload, unless a test sets another time.
NOT_READY_FOR = 1.0


class NotReady(Exception):
    """A message attaches a file MAX is still processing (answered 400 attachment.not.ready)."""


def multipart_data(content_type: str, body: bytes) -> bytes | None:
    """The bytes of the multipart field `data`, or None when the body has no such field."""
    if not content_type.lower().startswith("multipart/form-data"):
        return None
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n"
                                                  + body)
    if not message.is_multipart():
        return None
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "data":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else None
    return None


class FakeUploads:
    """Upload URLs handed out, files received, and when each token becomes ready (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._urls: dict[str, str] = {}  # upload id -> type
        self._ready_at: dict[str, float] = {}  # token -> when it may be attached
        self.not_ready_for = NOT_READY_FOR
        self.received: list[dict[str, Any]] = []  # {"type", "size", "token"} per received file

    def clear(self) -> None:
        with self._lock:
            self._urls.clear()
            self._ready_at.clear()
            self.received.clear()
            self.not_ready_for = NOT_READY_FOR

    def endpoint(self, query: dict[str, str], host: str) -> dict[str, Any]:
        """`POST /uploads?type=...`: where to send the bytes."""
        kind = query.get("type", "")
        if kind not in UPLOAD_TYPES:
            raise Invalid(f"Parameter `type` must be one of {', '.join(UPLOAD_TYPES)}")
        upload_id = f"u{next(self._numbers)}"
        with self._lock:
            self._urls[upload_id] = kind
        return {"url": f"http://{host}{UPLOAD_PATH}{upload_id}"}

    def receive(self, path: str, content_type: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """The bytes arrive at an upload URL: the token MAX answers (`photos` for an image)."""
        upload_id = path[len(UPLOAD_PATH):]
        with self._lock:
            kind = self._urls.pop(upload_id, None)
        if kind is None:
            return 404, {"code": "not.found", "message": "Unknown upload URL"}
        data = multipart_data(content_type, body)
        if not data:
            return 400, {"code": "proto.payload", "message": "Send the file as the multipart field `data`"}
        token = f"{kind}-token-{upload_id}"
        with self._lock:
            self._ready_at[token] = time.monotonic() + self.not_ready_for
            self.received.append({"type": kind, "size": len(data), "token": token})
        if kind == "image":
            return 200, {"photos": {f"photo-{upload_id}": {"token": token}}}
        return 200, {"token": token}

    def check_tokens(self, payload: Any) -> None:
        """Raise NotReady when a message attaches a token still being processed; Invalid for an unknown one."""
        attachments = payload.get("attachments") if isinstance(payload, dict) else None
        for attachment in attachments or []:
            inner = attachment.get("payload") if isinstance(attachment, dict) else None
            token = inner.get("token") if isinstance(inner, dict) else None
            if token is None:
                continue
            with self._lock:
                ready_at = self._ready_at.get(token)
            if ready_at is None:
                raise Invalid(f"attachments: unknown token {str(token)[:40]!r}")
            if time.monotonic() < ready_at:
                raise NotReady("Key: errors.process.attachment.file.not.processed")
