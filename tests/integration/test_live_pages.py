"""The live-dialog and publish-preview pages refuse hostile input with a sentence, never a 500."""
from __future__ import annotations

import pytest

from server.runtime.stores import TurnCommit, new_token
from tests.integration.api_helpers import create_flow, flow_doc, freeze
from tests.integration.runtime_app import running
from tests.integration.runtime_support import sqlite_url  # noqa: F401
from tests.integration.test_hostile_forms import signed_in

BOT = "pagebot"


@pytest.fixture
async def editor(app_client, admin_headers) -> dict[str, str]:
    created = await app_client.post("/api/bots", json={"id": BOT, "token": "t"}, headers=admin_headers)
    assert created.status_code == 201, created.text
    return await signed_in(app_client, admin_headers)


@pytest.mark.parametrize("query, words", [
    ("version=abc", "Choose a version"), ("version=0", "Choose a version"), ("version=%C2%B2", "Choose a version"),
    ("user=%07", "user id"), ("user=" + "9" * 400, "user id"),
])
async def test_bad_searches_of_the_live_list_say_what_to_do(app_client, editor, query, words) -> None:
    answer = await app_client.get(f"/bots/{BOT}/dialogs?{query}", headers=editor)
    assert answer.status_code == 400 and words in answer.text


async def test_the_live_list_of_an_idle_bot_says_nothing_runs(app_client, editor) -> None:
    answer = await app_client.get(f"/bots/{BOT}/dialogs", headers=editor)
    assert answer.status_code == 200 and "No dialog is running now." in answer.text
    listed = await app_client.get(f"/bots/{BOT}/dialogs?part=list&user=42", headers=editor)
    assert listed.status_code == 200 and "No running dialog matches." in listed.text
    assert "dialogs running now" not in listed.text  # a search redraws the list only, without counting
    page = await app_client.get(f"/bots/{BOT}/dialogs", headers={"X-CSRFToken": editor["X-CSRFToken"]})
    assert page.status_code == 200 and "<html" in page.text  # without htmx: a whole page
    assert (await app_client.get("/bots/nobot/dialogs", headers=editor)).status_code == 404


async def test_a_transcript_of_a_user_without_records_says_so(app_client, editor) -> None:
    answer = await app_client.get(f"/bots/{BOT}/dialogs/123", headers=editor)
    assert answer.status_code == 200 and "Nothing recorded for this user (records are kept 30 days)" in answer.text  # the bot's retention


@pytest.mark.parametrize("entry, status, words", [
    ("abc", 422, "Choose a point"), ("9" * 50, 422, "Choose a point"), ("²", 422, "Choose a point"),
    ("3", 422, "No dialog was running"),
])
async def test_opening_a_point_that_is_not_there_says_so(app_client, editor, entry, status, words) -> None:
    answer = await app_client.post(f"/bots/{BOT}/dialogs/123/simulate", data={"entry": entry}, headers=editor)
    assert answer.status_code == status and words in answer.text


@pytest.mark.parametrize("query, words", [
    ("", "Choose the bot"), (f"bot={BOT}&sessions=drop", "Choose what happens"),
    ("bot=nobot&version=1", "no longer there"), (f"bot={BOT}&version=77", "no longer there"),
    (f"bot={BOT}&version=x", "no longer there"),
])
async def test_the_publish_preview_fragment_explains_what_it_cannot_show(app_client, admin_headers, editor, query,
                                                                         words) -> None:
    await create_flow(app_client, admin_headers, flow_doc("pv"))
    await freeze(app_client, admin_headers, "pv")
    answer = await app_client.get(f"/flows/pv/publish/preview?{query}", headers=editor)
    assert answer.status_code in (200, 400) and words in answer.text


async def test_the_publish_preview_of_a_flow_without_versions_says_to_freeze_first(app_client, admin_headers,
                                                                                    editor) -> None:
    await create_flow(app_client, admin_headers, flow_doc("pv0"))
    answer = await app_client.get(f"/flows/pv0/publish/preview?bot={BOT}&sessions=keep", headers=editor)
    assert answer.status_code == 200 and "This flow has no version yet: freeze the draft first." in answer.text


async def test_the_publish_preview_fragment_counts_an_idle_bot(app_client, admin_headers, editor) -> None:
    await create_flow(app_client, admin_headers, flow_doc("pv"))
    await freeze(app_client, admin_headers, "pv")
    answer = await app_client.get(f"/flows/pv/publish/preview?bot={BOT}&version=1&sessions=reset", headers=editor)
    assert answer.status_code == 200 and "No dialogs are running now." in answer.text
    assert 'data-testid="no-token"' not in answer.text  # the bot has its token


async def test_the_publish_preview_warns_of_a_bot_without_a_token(app_client, admin_headers, editor) -> None:
    assert (await app_client.post("/api/bots", json={"id": "silent"}, headers=admin_headers)).status_code == 201
    await create_flow(app_client, admin_headers, flow_doc("pv"))
    await freeze(app_client, admin_headers, "pv")
    answer = await app_client.get("/flows/pv/publish/preview?bot=silent&version=1&sessions=keep", headers=editor)
    assert answer.status_code == 200
    assert "This bot has no MAX token yet: it cannot answer anyone until one is set in its settings." in answer.text



async def test_a_transcript_says_when_replies_to_the_user_still_wait(sqlite_url) -> None:
    async with running(sqlite_url, "http://127.0.0.1:9", None) as h:  # MAX unreachable: nothing leaves
        await h.bot(BOT)
        quiet = await h.api("GET", f"/bots/{BOT}/dialogs/555")
        assert quiet.status_code == 200 and 'data-testid="replies-waiting"' not in quiet.text
        store = h.runtime.store
        loaded = await store.begin(BOT, "555", token := new_token())
        await store.commit(BOT, "555", token, TurnCommit(None, outbox=[{"id": "x1", "op": "send", "text": "Пока"}],
                                                    outbox_lease=60), loaded)
        waiting = await h.api("GET", f"/bots/{BOT}/dialogs/555")
        assert "Some replies to this user are still waiting to be sent" in waiting.text


@pytest.mark.parametrize("version, status, words", [
    ("", 422, "Choose the version to publish."), ("x", 404, "no version"), ("1", 200, "now serves Регистрация version 1"),
])
async def test_the_publish_form_publishes_only_the_version_it_names(app_client, admin_headers, editor, version,
                                                                     status, words) -> None:
    await create_flow(app_client, admin_headers, flow_doc("pv"))
    await freeze(app_client, admin_headers, "pv")
    raised = await app_client.patch("/api/users/eddie", json={"role": "publisher"}, headers=admin_headers)
    assert raised.status_code == 200, raised.text
    answer = await app_client.post("/flows/pv/publish", data={"bot": BOT, "version": version, "sessions": "keep"},
                                   headers=editor)
    assert answer.status_code == status and words in answer.text
    served = (await app_client.get(f"/api/bots/{BOT}", headers=admin_headers)).json()["version"]
    assert served == (1 if status == 200 else None)


async def test_the_publish_preview_says_how_the_versions_saved_tests_fare(app_client, admin_headers, editor,
                                                                         monkeypatch) -> None:
    from tests.integration.test_api_flow_tests import HAPPY, put_tests

    await create_flow(app_client, admin_headers, flow_doc("pt"))
    await freeze(app_client, admin_headers, "pt")
    preview = f"/flows/pt/publish/preview?bot={BOT}&version=1&sessions=keep"
    untested = await app_client.get(preview, headers=editor)
    assert untested.status_code == 200 and "tests-" not in untested.text  # no saved tests, none required
    wrong = {**HAPPY, "name": "wrong name",
             "steps": [HAPPY["steps"][0], {"update": {"text": "Иван"}, "expect": {"state": "ask_email"}}]}
    revision = (await app_client.get("/api/flows/pt/tests", headers=admin_headers)).json()["revision"]
    assert (await put_tests(app_client, admin_headers, "pt", [HAPPY], revision)).status_code == 200
    passing = await app_client.get(preview, headers=editor)
    assert "The flow's saved test passes on version 1." in passing.text
    revision = (await app_client.get("/api/flows/pt/tests", headers=admin_headers)).json()["revision"]
    assert (await put_tests(app_client, admin_headers, "pt", [HAPPY, wrong], revision)).status_code == 200
    failing = await app_client.get(preview, headers=editor)
    assert "On version 1, 1 of 2 saved tests fails:" in failing.text and "«wrong name»" in failing.text
    assert "You can still publish it" in failing.text and "«happy path»" not in failing.text
    gate = await app_client.patch(f"/api/bots/{BOT}", json={"require_tests": True}, headers=admin_headers)
    assert gate.status_code == 200
    refused = await app_client.get(preview, headers=editor)
    assert "so the publish will be refused" in refused.text
    russian = await app_client.get(preview, headers={**editor, "Accept-Language": "ru"})
    assert "На версии 1 не проходят сохранённые тесты (1 из 2): «wrong name»" in " ".join(russian.text.split())
    monkeypatch.setattr("web.pages_publish_preview.TESTS_SECONDS", 0)
    known = await app_client.get(preview, headers=editor)  # the same tests on the same version: not run again
    assert "«wrong name»" in known.text
    revision = (await app_client.get("/api/flows/pt/tests", headers=admin_headers)).json()["revision"]
    assert (await put_tests(app_client, admin_headers, "pt", [wrong], revision)).status_code == 200
    slow = await app_client.get(preview, headers=editor)
    assert slow.status_code == 200 and "so they are not run here" in slow.text and "«wrong name»" not in slow.text
    monkeypatch.setattr("web.pages_publish_preview.TESTS_SECONDS", 3.0)
    finished = await app_client.get(preview, headers=editor)  # the run that outlasted the last preview
    assert "On version 1, the flow's saved test fails:" in finished.text and "«wrong name»" in finished.text
