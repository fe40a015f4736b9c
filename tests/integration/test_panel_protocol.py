"""The side panel saves the draft as the canvas does: the revision in If-Match, 412 when the draft moved on,
and an edit reads and loads the document once."""
from __future__ import annotations

import pytest

from server import design_pool
from server.services import design_work
from server.services import flows as flow_service
from tests.integration.api_helpers import create_flow, flow_doc
from tests.integration.test_hostile_forms import signed_in
from web import forms

STATE = {"id": "ask_name", "title": "Имя клиента"}


async def test_a_panel_post_names_its_revision_in_if_match(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, flow_doc("protocol"))
    draft = await app_client.get("/api/flows/protocol", headers=admin_headers)
    url = "/flows/protocol/edit/state/ask_name"

    missing = await app_client.post(url, data=STATE, headers=headers)
    assert missing.status_code == 428 and "without the revision" in missing.text
    moved = await app_client.put("/api/flows/protocol", json=draft.json(), headers={**admin_headers,
                                                                                    "If-Match": draft.headers["etag"]})
    assert moved.status_code == 200
    for language, sentence in (("en", "Someone else saved this flow since you opened this form"),
                               ("ru", "Кто-то другой сохранил сценарий после того, как вы открыли эту форму")):
        stale = await app_client.post(url, data=STATE, headers={**headers, "If-Match": draft.headers["etag"],
                                                                  "Accept-Language": language})
        assert stale.status_code == 412 and sentence in stale.text  # the canvas's PUT gets 412 as well
    assert (await app_client.get("/api/flows/protocol", headers=admin_headers)).json()["states"][0]["title"] != \
        STATE["title"]

    saved = await app_client.post(url, data=STATE, headers={**headers, "If-Match": moved.headers["etag"]})
    assert saved.status_code == 200 and saved.headers["X-Botflow-Revision"] != moved.json()["revision"]
    stored = await app_client.get("/api/flows/protocol", headers=admin_headers)
    assert stored.json()["states"][0]["title"] == STATE["title"]
    assert stored.headers["etag"] == f'"{saved.headers["X-Botflow-Revision"]}"'


async def test_one_panel_edit_reads_and_loads_the_document_once(app_client, admin_headers,
                                                               monkeypatch: pytest.MonkeyPatch):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, flow_doc("once"))
    draft = await app_client.get("/api/flows/once", headers=admin_headers)
    monkeypatch.setattr(design_pool._pool, "workers", 0)  # the design work inline, where it can be counted
    calls: list[str] = []

    def counted(name, real):
        def wrapper(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(design_work, "load", counted("load", design_work.load))
    monkeypatch.setattr(forms, "load", counted("load", forms.load))
    monkeypatch.setattr(flow_service, "get_draft", counted("read", flow_service.get_draft))
    answer = await app_client.post("/flows/once/edit/state/ask_name", data=STATE,
                                   headers={**headers, "If-Match": draft.headers["etag"]})
    assert answer.status_code == 200 and "X-Botflow-Revision" in answer.headers, answer.text
    assert 'id="draft-answer"' in answer.text and 'id="issues-pane"' in answer.text
    assert sorted(calls) == ["load", "read"]
