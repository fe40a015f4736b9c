"""Uploading a picture for messages over HTTP: stored once per content, read back, hostile files refused."""
from __future__ import annotations

from pathlib import Path

from server.services.uploads import MAX_UPLOAD

PICTURE = (Path(__file__).resolve().parents[1] / "data" / "picture.png").read_bytes()


async def test_a_picture_uploads_once_and_reads_back(app_client, admin_headers, role_headers) -> None:
    editor, viewer = await role_headers("editor"), await role_headers("viewer")
    made = await app_client.post("/api/uploads?filename=кот.png", content=PICTURE,
                                 headers={**editor, "Content-Type": "application/octet-stream"})
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["id"].startswith("up_") and body["content_type"] == "image/png" and body["size"] == len(PICTURE)
    assert body["filename"] == "кот.png" and made.headers["location"] == body["url"]
    again = await app_client.post("/api/uploads", content=PICTURE, headers=editor)
    assert again.status_code == 201 and again.json()["id"] == body["id"]  # the same bytes: the same upload
    read = await app_client.get(body["url"], headers=viewer)
    assert read.status_code == 200 and read.content == PICTURE
    assert read.headers["content-type"] == "image/png" and read.headers["x-content-type-options"] == "nosniff"


async def test_uploading_needs_an_editor(app_client, role_headers) -> None:
    viewer = await role_headers("viewer")
    assert (await app_client.post("/api/uploads", content=PICTURE, headers=viewer)).status_code == 403
    assert (await app_client.post("/api/uploads", content=PICTURE)).status_code == 401


async def test_what_is_not_a_picture_is_refused_with_a_sentence(app_client, role_headers) -> None:
    editor = await role_headers("editor")
    for content in (b"", b"<svg onload=alert(1)>", b"GIF8" + b"\0" * 10, b"%PDF-1.7"):
        answer = await app_client.post("/api/uploads", content=content, headers={**editor, "Content-Type": "image/png"})
        assert answer.status_code == 422, (content, answer.text)
        assert "PNG, JPEG, GIF or WebP" in answer.json()["message"]


async def test_a_file_past_the_limit_is_refused_before_it_is_kept(app_client, role_headers) -> None:
    editor = await role_headers("editor")
    answer = await app_client.post("/api/uploads", content=PICTURE + b"\0" * MAX_UPLOAD, headers=editor)
    assert answer.status_code == 413
    assert "10 MB" in answer.json()["message"]


async def test_an_unknown_upload_is_a_404_with_a_sentence(app_client, role_headers) -> None:
    viewer = await role_headers("viewer")
    for name in ("up_000000000000000000000000", "x" * 500, "up_ZZ"):
        answer = await app_client.get(f"/api/uploads/{name}", headers=viewer)
        assert answer.status_code == 404 and "upload the picture again" in answer.json()["message"]
