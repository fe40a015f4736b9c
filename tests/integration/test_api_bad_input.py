"""Bad input never gets a 500: each case gets a 4xx with the JSON error shape and a sentence."""
from __future__ import annotations

import json

from litestar.testing import AsyncTestClient

from flows.limits import MAX_DOCUMENT_BYTES
from tests.integration.api_helpers import create_flow, flow_doc

JSON = {"Content-Type": "application/json"}


def check_error(response, status: int | tuple[int, ...]) -> dict:
    statuses = status if isinstance(status, tuple) else (status,)
    assert response.status_code in statuses, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error", "message", "details"}, body
    assert isinstance(body["message"], str) and len(body["message"]) > 10, body
    return body


async def test_malformed_bodies(app_client, admin_headers):
    revision = await create_flow(app_client, admin_headers, flow_doc("reg"))
    deep = "[" * 100_000 + "]" * 100_000
    cases = [
        ("POST", "/api/flows", b"{not json", JSON, 422, "invalid_json"),
        ("POST", "/api/flows", b"\xff\xfe{}", JSON, 422, "invalid_json"),
        ("POST", "/api/flows", b"[1, 2]", JSON, 422, "invalid_json"),
        ("POST", "/api/flows", deep.encode(), JSON, 422, "invalid_json"),
        ("POST", "/api/flows", b"", JSON, 422, "invalid_json"),
        ("POST", "/api/flows", b"format: [unclosed", {"Content-Type": "application/yaml"}, 422, None),
        ("POST", "/api/flows", b"id=x", {"Content-Type": "application/x-www-form-urlencoded"}, 415, None),
        ("POST", "/api/flows", b"<flow/>", {"Content-Type": "text/xml"}, 415, None),
        ("POST", "/api/flows", json.dumps(flow_doc("x", states="many")).encode(), JSON, 422, "invalid_document"),
        ("POST", "/api/flows", json.dumps({**flow_doc("x"), "title": 5}).encode(), JSON, 422, "invalid_document"),
        ("POST", "/api/flows", json.dumps(flow_doc("../etc")).encode(), JSON, 422, "invalid_document"),
        ("POST", "/api/flows", json.dumps(flow_doc("x" * 500)).encode(), JSON, 422, "invalid_document"),
        ("POST", "/api/flows", b'{"format": "botflow/v1", "id": "nan", "title": NaN, "states": []}', JSON,
         (400, 422), None),
        ("POST", "/api/flows", b'{"format": "botflow/v1", "id": "sur", "title": "\\ud800", "states": []}', JSON,
         (400, 422), None),
        ("PUT", "/api/flows/reg", b"{", {**JSON, "If-Match": f'"{revision}"'}, 422, "invalid_json"),
        ("POST", "/api/users", b'{"username": "a"', JSON, 400, "invalid_json"),
        ("POST", "/api/users", b'"just a string"', JSON, 422, None),
        ("POST", "/api/users", b'{"username": "a\\u0000b", "role": "viewer"}', JSON, 422, None),
        ("POST", "/api/users", b'{"username": "ok", "role": "viewer", "password": "\\ud800"}', JSON, 422, None),
        ("POST", "/api/bots", b'{"id": "b", "title": "\\u0000"}', JSON, 422, None),
        ("POST", "/api/bots", b'{"id": "b"}', {"Content-Type": "text/plain"}, 415, None),
        ("POST", "/api/flows/reg/versions", b'{"note": ["a"]}', JSON, 422, None),
        ("POST", "/api/flows/reg/versions", b'{"note": "x", "force": true}', JSON, 422, None),
        ("POST", "/api/flows/reg/simulate", b'{"session": "s", "update": {"text": "a"}, "source": 1.5}', JSON, 422, None),
        ("POST", "/api/flows/reg/simulate", b'{"session": "s", "update": {"idle": NaN}}', JSON, 400, None),
        # nested strings the database cannot store: refused at the field that holds them
        ("POST", "/api/flows/reg/simulate", b'{"session": "s", "update": {"text": "Iv\\ud800an"}}', JSON, 422, None),
        ("POST", "/api/flows/reg/simulate", b'{"session": "s", "update": {"payload": "\\ud800"}}', JSON, 422, None),
        ("POST", "/api/flows/reg/simulate", b'{"session": "s", "update": {"bot_started": "a\\u0000"}}', JSON, 422,
         None),
    ]
    for method, path, content, headers, status, code in cases:
        response = await app_client.request(method, path, content=content, headers={**admin_headers, **headers})
        body = check_error(response, status)
        if code:
            assert body["error"] == code, (path, content[:40], body)
    invalid = await app_client.post("/api/flows", content=json.dumps(flow_doc("x", states="many")).encode(),
                                    headers={**admin_headers, **JSON})
    assert invalid.json()["details"] == [{"path": "states", "message": invalid.json()["details"][0]["message"]}]


async def test_paths_with_odd_ids(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    paths = ["/api/flows/a%2Fb", "/api/flows/..%2F..%2Fetc%2Fpasswd", "/api/flows/%00", "/api/flows/" + "x" * 5000,
             "/api/flows/%F0%9F%98%80", "/api/bots/a%2Fb", "/api/bots/%00/publications",
             "/api/flows/reg/versions/-1", "/api/flows/reg/versions/1e3", "/api/flows/reg/versions/%00",
             "/api/users/%2F/tokens", "/api/nothing/here", "/api/flows/%ED%A0%80", "/api/flows/%FF%FE",
             "/api/flows/reg/diff?from=%ED%A0%80&to=draft", "/api/bots/%ED%A0%80/publications"]
    for path in paths:
        method = "POST" if path.endswith("tokens") else "GET"
        response = await app_client.request(method, path, headers=admin_headers)
        check_error(response, (400, 404, 405))


async def test_wrong_method_and_headers(app_client, admin_headers):
    check_error(await app_client.patch("/api/flows", headers=admin_headers), 405)
    revision = await create_flow(app_client, admin_headers, flow_doc("reg"))
    odd_tags = ["W/", '"', "*garbage*", ("é" * 300).encode(), b"\xff\xfe", '"*"', 'W/"*"', '"stale", *']
    for tag in odd_tags:
        response = await app_client.put("/api/flows/reg", json=flow_doc("reg"), headers={**admin_headers, "If-Match": tag})
        check_error(response, 412)
    # Repeated If-Match headers are one list: the current revision in the second one still matches.
    both = await app_client.put("/api/flows/reg", json=flow_doc("reg"),
                                headers=[*admin_headers.items(), ("If-Match", '"stale"'), ("If-Match", f'"{revision}"')])
    assert both.status_code == 200
    empty = await app_client.put("/api/flows/reg", json=flow_doc("reg"), headers={**admin_headers, "If-Match": ""})
    check_error(empty, 428)  # names no revision: as if it were not sent
    check_error(await app_client.get("/api/flows", headers={"Authorization": ("Bearer " + "ы" * 10).encode()}), 401)
    check_error(await app_client.get("/api/flows", headers={"Authorization": "Bearer " + "x" * 10000}), 401)
    assert revision


async def test_body_size_limit(make_app, admin_headers):
    async with AsyncTestClient(app=make_app(max_body=6000)) as client:
        check_error(await client.post("/api/users", content=b"{" + b" " * 7000 + b"}",
                                      headers={**admin_headers, **JSON}), 413)
        # flow documents have their own limit: BOTFLOW_MAX_BODY is for webhooks and forms
        big = await client.post("/api/flows", json=flow_doc("big", title="x" * 8000), headers=admin_headers)
        assert big.status_code == 201, big.text


async def test_flow_documents_past_their_own_limit_are_413(app_client, admin_headers):
    huge = b'{"format": "botflow/v1", "id": "huge", "title": "' + b"x" * MAX_DOCUMENT_BYTES + b'", "states": []}'
    body = check_error(await app_client.post("/api/flows", content=huge, headers={**admin_headers, **JSON}), 413)
    assert str(MAX_DOCUMENT_BYTES) in body["message"]
    three_mb = b'{"format": "botflow/v1", "id": "roomy", "title": "' + b"x" * (3 * 1024 * 1024) + b'", "states": []}'
    assert (await app_client.post("/api/flows", content=three_mb, headers={**admin_headers, **JSON})).status_code == 201
