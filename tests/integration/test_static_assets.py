"""Every asset route answers as browsers expect: versioned URLs immutable for a year, the rest revalidated with
ETag / Last-Modified and 304, text compressed for a browser that asks for it."""
from __future__ import annotations

import re
from email.utils import formatdate
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from server.assets import IMMUTABLE, REVALIDATE
from tests.integration.api_helpers import create_flow, create_user, flow_doc

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
FILES = sorted(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file())
PASSWORD = "correct horse battery"
SQLITE = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the files do not depend on it


def test_the_static_folder_is_not_empty() -> None:
    assert len(FILES) > 20 and "css/app.css" in FILES and "js/editor.js" in FILES


async def assert_revalidates(client: AsyncTestClient, url: str, cache_control: str, body: bytes) -> None:
    """200 with validators and `cache_control`, then 304 for either validator, 200 again for stale ones."""
    first = await client.get(url, headers={"Accept-Encoding": "identity"})
    assert first.status_code == 200, url
    assert first.content == body, url
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert first.headers["cache-control"] == cache_control, url
    for validators in ({"If-None-Match": etag}, {"If-None-Match": f'"other", {etag}'},
                       {"If-Modified-Since": modified}):
        again = await client.get(url, headers=validators)
        assert again.status_code == 304, (url, validators)
        assert again.content == b"" and again.headers["etag"] == etag, url
        assert again.headers["cache-control"] == cache_control, url
    for stale in ({"If-None-Match": 'W/"0123"'}, {"If-Modified-Since": formatdate(0, usegmt=True)},
                  {"If-None-Match": 'W/"0123"', "If-Modified-Since": modified}):  # the tag wins over the date
        assert (await client.get(url, headers=stale)).status_code == 200, (url, stale)


@SQLITE
async def test_every_static_file_is_revalidated_by_etag_and_date_at_its_plain_address(app_client) -> None:
    for name in FILES:
        await assert_revalidates(app_client, f"/static/{name}", REVALIDATE, (STATIC / name).read_bytes())


@SQLITE
async def test_every_static_file_at_its_versioned_address_is_immutable(app_client) -> None:
    version = app_client.app.state.assets.version
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    for name in FILES:
        await assert_revalidates(app_client, f"/static/v/{version}/{name}", IMMUTABLE, (STATIC / name).read_bytes())


@SQLITE
async def test_another_release_s_version_gets_the_current_file_revalidated_not_kept(app_client) -> None:
    answer = await app_client.get("/static/v/0123456789ab/css/app.css")
    assert answer.status_code == 200 and answer.headers["cache-control"] == REVALIDATE
    assert answer.content == (STATIC / "css" / "app.css").read_bytes()


@SQLITE
async def test_the_icon_is_revalidated_too(app_client) -> None:
    await assert_revalidates(app_client, "/favicon.ico", REVALIDATE, (STATIC / "favicon.svg").read_bytes())


@SQLITE
async def test_head_gives_the_length_without_the_body(app_client) -> None:
    answer = await app_client.head("/static/js/editor.js", headers={"Accept-Encoding": "identity"})
    assert answer.status_code == 200 and answer.content == b""
    assert int(answer.headers["content-length"]) == (STATIC / "js" / "editor.js").stat().st_size
    assert answer.headers["etag"]
    packed = await app_client.head("/static/js/editor.js", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["content-encoding"] == "gzip" and packed.content == b""
    assert int(packed.headers["content-length"]) < int(answer.headers["content-length"]) / 2


@SQLITE
async def test_unknown_names_are_404_with_a_sentence(app_client) -> None:
    for path in ("/static/nothing.css", "/static/v/0123456789ab/nothing.js", "/static/css", "/static/../server/app.py",
                 "/static/%2e%2e/pyproject.toml"):
        answer = await app_client.get(path)
        assert answer.status_code == 404, path
        assert answer.json()["message"], path


@SQLITE
async def test_text_assets_are_gzipped_for_a_browser_that_asks(app_client) -> None:
    for name in ("css/app.css", "js/editor.js", "vendor/cytoscape/3.35.0/cytoscape.min.js"):
        raw = await app_client.get(f"/static/{name}", headers={"Accept-Encoding": "gzip"})
        assert raw.headers.get("content-encoding") == "gzip", name
        assert raw.content == (STATIC / name).read_bytes(), name  # httpx decoded it
        assert int(raw.headers["content-length"]) < len(raw.content) / 2, name
        for refused in ("identity", "gzip;q=0, identity", "br"):
            plain = await app_client.get(f"/static/{name}", headers={"Accept-Encoding": refused})
            assert "content-encoding" not in plain.headers, (name, refused)
            assert plain.content == (STATIC / name).read_bytes(), name
    # Pages and API answers go through Litestar's compression (above 1 KiB).
    for path in ("/login", "/schema/openapi.json"):
        answer = await app_client.get(path, headers={"Accept-Encoding": "gzip"})
        assert answer.status_code == 200 and answer.headers.get("content-encoding") == "gzip", path
    # Pictures are compressed already, and tiny files are not worth it.
    png = next((name for name in FILES if name.endswith((".png", ".woff2"))), None)
    for name in filter(None, (png, "favicon.svg" if (STATIC / "favicon.svg").stat().st_size < 1024 else None)):
        answer = await app_client.get(f"/static/{name}", headers={"Accept-Encoding": "gzip"})
        assert "content-encoding" not in answer.headers, name


@SQLITE
async def test_every_asset_a_page_names_is_versioned_and_immutable(app_client, admin_headers) -> None:
    await create_user(app_client, admin_headers, "admin", "assets", password=PASSWORD)
    await create_flow(app_client, admin_headers, flow_doc("cached"))
    await app_client.get("/login")
    login = await app_client.post("/login", data={"username": "assets", "password": PASSWORD,
                                                  "_csrf_token": app_client.cookies.get("csrftoken")},
                                  follow_redirects=False)
    assert login.status_code == 303
    version = app_client.app.state.assets.version
    named: set[str] = set()
    for page in ("/login", "/flows", "/flows/cached/edit", "/flows/cached/versions", "/bots", "/schema"):
        html = (await app_client.get(page)).text
        urls = set(re.findall(r'(?:src|href)="(/static/[^"]+)"', html))
        assert urls, page
        named |= urls
    assert all(url.startswith(f"/static/v/{version}/") for url in named), sorted(named)
    for url in sorted(named):
        answer = await app_client.get(url)
        assert answer.status_code == 200 and answer.headers["cache-control"] == IMMUTABLE, url


def test_modules_import_each_other_by_relative_address_so_they_share_the_page_s_version() -> None:
    imports = re.compile(r"""(?:^|\s)(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']""",
                         re.M)
    for path in (STATIC / "js").rglob("*.js"):
        for found in imports.findall(path.read_text(encoding="utf-8")):
            target = found[0] or found[1]
            assert target.startswith("./") or target.startswith("../"), (path, target)
