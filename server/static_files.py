"""GET/HEAD /static/<name>: files from the asset index, with the cache headers server.assets describes."""
from __future__ import annotations

from litestar import Request, Response, route
from litestar.enums import HttpMethod

from server.assets import IMMUTABLE, REVALIDATE, Asset, AssetIndex, accepts_gzip, not_modified
from server.errors import NotFound
from server.http_params import PathStr


@route("/static/{name:path}", http_method=[HttpMethod.GET, HttpMethod.HEAD], include_in_schema=False)
async def static_file(request: Request, name: PathStr) -> Response[bytes]:
    """The file, or 304 when the browser's copy is current; an unknown name is a 404 naming nothing on disk."""
    index: AssetIndex = request.app.state.assets
    asset, immutable = index.lookup(name.lstrip("/"))
    if asset is None:
        raise NotFound("There is no such static file; pages name theirs, so check the address.")
    return asset_answer(request, asset, immutable)


def asset_answer(request: Request, asset: Asset, immutable: bool = False) -> Response[bytes]:
    """`asset` with its validators and cache policy, or 304 when the request's validators match it."""
    headers = {"ETag": asset.etag, "Last-Modified": asset.last_modified,
               "Cache-Control": IMMUTABLE if immutable else REVALIDATE, "Vary": "Accept-Encoding"}
    if not_modified(asset, request.headers.get("if-none-match"), request.headers.get("if-modified-since")):
        return Response(b"", status_code=304, headers=headers)
    body = asset.body
    packed = request.app.state.assets.gzipped(asset) if accepts_gzip(request.headers.get("accept-encoding")) else None
    if packed is not None:  # compressed once and kept, not again for every request (the app excludes /static)
        body, headers["Content-Encoding"] = packed, "gzip"
    if request.method == HttpMethod.HEAD:
        headers["Content-Length"] = str(len(body))
        body = b""
    return Response(body, media_type=asset.media_type, headers=headers)
