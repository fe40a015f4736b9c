"""Pictures uploaded in the editor: checked by their bytes, stored once per content, read back by id."""
from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.uploads import UploadRow
from server.errors import N_, AppError, NotFound, Unprocessable

# MAX takes images up to 50 MB; a message picture kept in the database stays far below that.
MAX_UPLOAD = 10 * 1024 * 1024
# What a picture's first bytes say it is; the declared Content-Type is not trusted.
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
              (b"GIF89a", "image/gif"))
UPLOAD_ID = re.compile(r"up_[a-f0-9]{24}")
_NAME_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]+")


def picture_type(data: bytes) -> str | None:
    """The image type the bytes are (PNG, JPEG, GIF or WebP), or None."""
    for signature, kind in SIGNATURES:
        if data.startswith(signature):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


class TooLarge(AppError):
    def __init__(self, message: str) -> None:
        super().__init__(413, "too_large", message)


def too_large() -> AppError:
    """The refusal of a file past MAX_UPLOAD."""
    return TooLarge.worded(N_("The file is larger than %(mb)s MB; choose a smaller picture."),
                           {"mb": MAX_UPLOAD // (1024 * 1024)})


def described(row: UploadRow) -> dict[str, Any]:
    """The API's view of an upload (never its bytes)."""
    return {"id": row.id, "filename": row.filename, "content_type": row.content_type, "size": row.size,
            "url": f"/api/uploads/{row.id}"}


async def store(session: AsyncSession, data: bytes, filename: str, actor: str | None) -> UploadRow:
    """Keep an uploaded picture; the same bytes uploaded again give back the upload made first."""
    if not data:
        raise Unprocessable.worded(N_("The file is empty; choose a picture (PNG, JPEG, GIF or WebP)."), {})
    if len(data) > MAX_UPLOAD:
        raise too_large()
    kind = picture_type(data)
    if kind is None:
        raise Unprocessable.worded(N_("This file is not a picture MAX can show; upload a PNG, JPEG, GIF or WebP"
                                      " image."), {})
    digest = hashlib.sha256(data).hexdigest()
    found = await session.scalar(select(UploadRow).where(UploadRow.sha256 == digest))
    if found is not None:
        return found
    name = _NAME_UNSAFE.sub(" ", filename).strip()[:255]
    row = UploadRow(id="up_" + secrets.token_hex(12), filename=name, content_type=kind, size=len(data),
                    sha256=digest, data=data, created_by=actor)
    session.add(row)
    try:
        await session.commit()
    except IntegrityError:  # the same bytes arrived at the same moment through another request
        await session.rollback()
        found = await session.scalar(select(UploadRow).where(UploadRow.sha256 == digest))
        if found is None:
            raise
        return found
    return row


async def read(session: AsyncSession, upload_id: str) -> UploadRow:
    """The upload with this id; 404 with a sentence otherwise."""
    row = await session.get(UploadRow, upload_id) if UPLOAD_ID.fullmatch(upload_id) else None
    if row is None:
        raise NotFound(f"There is no uploaded file {upload_id[:60]!r}; upload the picture again in the editor.")
    return row
