"""Uploaded pictures on their way to MAX: each bot uploads a file once (`POST /uploads`, then the bytes as
multipart `data` to the URL it gives) and reuses the token MAX answers for every later message."""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

import httpx

from server.channels.max.client import MaxApiError, MaxClient

log = logging.getLogger("botflow.channels.max.uploads")

UPLOAD_TIMEOUT = 60.0  # the bytes of a picture (at most 10 MB) may take a while on a slow link


class StoredFile(Protocol):
    id: str
    filename: str
    content_type: str
    data: bytes


class Files(Protocol):
    """Where uploaded files and each bot's token for them are kept (`server.db.uploads.UploadFiles`)."""

    async def file(self, upload_id: str) -> StoredFile | None: ...

    async def token(self, bot_id: str, upload_id: str) -> str | None: ...

    async def remember(self, bot_id: str, upload_id: str, token: str) -> None: ...


def token_of(answer: Any) -> str | None:
    """The token in what the upload URL answered: `{"photos": {id: {"token"}}}` for a picture, else `{"token"}`."""
    if not isinstance(answer, dict):
        return None
    photos = answer.get("photos")
    if isinstance(photos, dict):
        for photo in photos.values():
            if isinstance(photo, dict) and isinstance(photo.get("token"), str) and photo["token"]:
                return photo["token"]
    token = answer.get("token")
    return token if isinstance(token, str) and token else None


class MaxUploads:
    """A bot's MAX token for an uploaded file, uploading it the first time (one upload at a time per file)."""

    def __init__(self, client: MaxClient, files: Files) -> None:
        self.client = client
        self.files = files
        self.http = httpx.AsyncClient(timeout=UPLOAD_TIMEOUT, trust_env=False, follow_redirects=False)
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def aclose(self) -> None:
        await self.http.aclose()

    async def token(self, bot_id: str, token: str, upload_id: str) -> str | None:
        """The token to attach `upload_id` by for this bot; None when no such file is stored."""
        known = await self.files.token(bot_id, upload_id)
        if known is not None:
            return known
        # One lock per bot and file (a few per bot: the pictures its flows show), so two sends of a picture
        # not uploaded yet upload it once.
        async with self._locks.setdefault((bot_id, upload_id), asyncio.Lock()):
            known = await self.files.token(bot_id, upload_id)  # uploaded while this one waited
            if known is not None:
                return known
            stored = await self.files.file(upload_id)
            if stored is None:
                return None
            made = await self._upload(token, stored)
            await self.files.remember(bot_id, upload_id, made)
            log.info("uploaded %s to MAX for bot %s", upload_id, bot_id,
                     extra={"event": "upload", "bot": bot_id, "outcome": "uploaded"})
            return made

    async def _upload(self, token: str, stored: StoredFile) -> str:
        kind = "image" if stored.content_type.startswith("image/") else "file"
        endpoint = await self.client.request(token, "POST", "/uploads", params={"type": kind})
        url = endpoint.get("url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise MaxApiError(None, "bad.response", "POST /uploads: the answer names no upload URL", True)
        try:
            response = await self.http.post(url, files={"data": (stored.filename or stored.id, stored.data,
                                                                 stored.content_type)})
        except httpx.HTTPError as exc:
            raise MaxApiError(None, "network", f"uploading the file failed: {type(exc).__name__}", True) from None
        try:
            answer = response.json()
        except ValueError:
            answer = None
        made = token_of(answer) if response.status_code < 400 else None
        if made is None:
            code = str(answer.get("code")) if isinstance(answer, dict) and answer.get("code") else "upload.failed"
            raise MaxApiError(response.status_code, code, "the upload URL answered no token",
                              response.status_code == 429 or response.status_code >= 500)
        return made
