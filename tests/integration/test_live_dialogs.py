"""Live dialogs and the publish preview, with dialogs put in known states by real webhooks (Redis and SQL)."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from server.db.models import FlowRow, PublicationRow, VersionRow
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, registration, serving
from tests.integration.runtime_support import redis_prefix, sqlite_url  # noqa: F401
from tests.integration.test_runtime_versions import second_version

BOT = "livebot"
# user -> messages that leave the dialog in a known state of registration v1
AT_PHONE = ("/start", "Иван")
AT_EMAIL = ("/start", "Иван", "+79991234567")


@pytest.fixture(params=["redis", "sql"])
async def harness(request, fake_max: FakeMax) -> Harness:  # noqa: F811
    async with serving(request, request.param, fake_max.url, BOT, registration()) as h:
        yield h


async def talk(h: Harness, user: int, texts: tuple[str, ...]) -> None:
    for text in texts:
        assert (await h.deliver(BOT, msg(user, text))).status_code == 200


async def known_states(h: Harness) -> None:
    """Three dialogs at ask_name, two at ask_phone, one at ask_email, one ended by /cancel."""
    for user in (5001, 5002, 5003):
        await talk(h, user, ("/start",))
    for user in (5101, 5102):
        await talk(h, user, AT_PHONE)
    await talk(h, 5201, AT_EMAIL)
    await talk(h, 5301, ("/start", "/cancel"))


async def add_version(h: Harness, document: dict) -> int:
    """Freeze `document` as the flow's next version without publishing it."""
    async with h.app.state.db.session() as s:
        flow = await s.get(FlowRow, document["id"])
        flow.version_seq += 1
        s.add(VersionRow(flow_id=flow.id, number=flow.version_seq, document=json.dumps(document, ensure_ascii=False),
                         hash=f"sha256:{flow.id}{flow.version_seq}", validation="{}"))
        await s.commit()
        return flow.version_seq


async def get(h: Harness, path: str, **params) -> dict:
    answer = await h.api("GET", path, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_the_live_list_counts_and_pages_dialogs_in_known_states(harness: Harness) -> None:
    await known_states(harness)
    body = await get(harness, f"/api/bots/{BOT}/dialogs", limit=2)
    assert body["counts"] == [
        {"flow": "registration", "version": 1, "state": "ask_email", "dialogs": 1},
        {"flow": "registration", "version": 1, "state": "ask_name", "dialogs": 3},
        {"flow": "registration", "version": 1, "state": "ask_phone", "dialogs": 2},
    ]
    seen, page = [], body
    while True:
        assert len(page["dialogs"]) <= 2
        seen += page["dialogs"]
        if page["next"] is None:
            break
        page = await get(harness, f"/api/bots/{BOT}/dialogs", limit=2, cursor=page["next"])
    assert sorted(d["user"] for d in seen) == ["5001", "5002", "5003", "5101", "5102", "5201"]
    assert all(d["updated"].endswith("Z") and d["flow"] == "registration" for d in seen)
    exact = await get(harness, f"/api/bots/{BOT}/dialogs", user="5201")
    assert [(d["user"], d["state"], d["version"]) for d in exact["dialogs"]] == [("5201", "ask_email", 1)]
    assert exact["next"] is None
    prefix = await get(harness, f"/api/bots/{BOT}/dialogs", user="51*")
    assert sorted(d["user"] for d in prefix["dialogs"]) == ["5101", "5102"]
    at_name = await get(harness, f"/api/bots/{BOT}/dialogs", state="ask_name", version=1)
    assert sorted(d["user"] for d in at_name["dialogs"]) == ["5001", "5002", "5003"]
    assert (await get(harness, f"/api/bots/{BOT}/dialogs", user="5301"))["dialogs"] == []  # cancelled


@pytest.mark.parametrize("params, words", [
    ({"limit": "0"}, "limit"), ({"limit": "many"}, "limit"), ({"version": "-1"}, "version"),
    ({"user": "5*1*"}, "user"), ({"state": "a\x07b"}, "state"), ({"user": "9" * 300}, "user"),
    ({"limit": "²"}, "limit"), ({"version": "١"}, "version"),
])
async def test_bad_listing_parameters_are_refused_with_a_sentence(harness: Harness, params: dict, words: str) -> None:
    answer = await harness.api("GET", f"/api/bots/{BOT}/dialogs", params=params)
    assert answer.status_code == 400 and words in answer.json()["message"]


async def test_a_cursor_the_listing_never_handed_out_is_a_400_on_redis(harness: Harness) -> None:
    answer = await harness.api("GET", f"/api/bots/{BOT}/dialogs", params={"cursor": "x.y"})
    if harness.runtime.store.name == "redis":
        assert answer.status_code == 400 and "cursor" in answer.json()["message"]
    else:  # SQL pages by user id: any text is a place to continue after
        assert answer.status_code == 200


async def test_the_listing_of_an_unknown_bot_is_a_404(harness: Harness) -> None:
    answer = await harness.api("GET", "/api/bots/nobot/dialogs")
    assert answer.status_code == 404


@pytest.mark.parametrize("mode, continuing, dropped, dropped_states", [
    ("keep", 6, 0, []),
    ("migrate", 5, 1, [{"flow": "registration", "version": 1, "state": "ask_email", "dialogs": 1}]),
    ("reset", 0, 6, None),
])
async def test_the_publish_preview_foresees_keep_migrate_and_reset_and_the_record_keeps_it(
        harness: Harness, mode: str, continuing: int, dropped: int, dropped_states: list | None) -> None:
    await known_states(harness)
    version = await add_version(harness, second_version())  # ask_email is renamed ask_mail in v2
    preview = await get(harness, f"/api/bots/{BOT}/publish/preview", flow="registration", version=version,
                        sessions=mode)
    assert (preview["total"], preview["continuing"], preview["dropped"]) == (6, continuing, dropped)
    assert preview["running"] == (await get(harness, f"/api/bots/{BOT}/dialogs"))["counts"]
    if dropped_states is not None:
        assert preview["dropped_states"] == dropped_states
    else:
        assert sum(row["dialogs"] for row in preview["dropped_states"]) == 6
    published = await harness.api("POST", f"/api/bots/{BOT}/publish",
                                  json={"flow": "registration", "version": version, "sessions": mode})
    assert published.status_code == 200, published.text
    foreseen = {"running": 6, "continuing": continuing, "dropped": dropped}
    assert published.json()["dialogs"] == foreseen
    history = await get(harness, f"/api/bots/{BOT}/publications")
    assert history[0]["dialogs"] == foreseen
    after = await get(harness, f"/api/bots/{BOT}/dialogs")
    assert sum(row["dialogs"] for row in after["counts"]) == continuing  # the publish did what it foresaw
    async with harness.app.state.db.session() as s:
        row = (await s.execute(select(PublicationRow).order_by(PublicationRow.id.desc()))).scalars().first()
    assert (row.dialogs_running, row.dialogs_continuing, row.dialogs_dropped) == (6, continuing, dropped)
    audit = await get(harness, "/api/audit", target=f"bot:{BOT}")
    assert audit[0]["action"] == "bot.publish" and audit[0]["details"]["dialogs_dropped"] == dropped


@pytest.mark.parametrize("mode, continuing, dropped", [("keep", 1, 0), ("migrate", 1, 0), ("reset", 0, 1)])
async def test_a_publish_of_the_version_dialogs_run_on_drops_them_only_on_reset(
        harness: Harness, mode: str, continuing: int, dropped: int) -> None:
    await talk(harness, 5401, AT_EMAIL)
    preview = await get(harness, f"/api/bots/{BOT}/publish/preview", flow="registration", version=1,
                        sessions=mode)
    assert (preview["total"], preview["continuing"], preview["dropped"]) == (1, continuing, dropped)
    published = await harness.api("POST", f"/api/bots/{BOT}/publish",
                                  json={"flow": "registration", "version": 1, "sessions": mode})
    assert published.json()["dialogs"] == {"running": 1, "continuing": continuing, "dropped": dropped}
    answer = await harness.api("GET", f"/api/bots/{BOT}/users/5401/session")
    assert answer.status_code == (404 if dropped else 200)  # a reset starts everyone over


@pytest.mark.parametrize("params, status, words", [
    ({}, 400, "flow"), ({"flow": "registration", "sessions": "drop"}, 400, "sessions"),
    ({"flow": "registration", "version": "x"}, 400, "version"), ({"flow": "nope"}, 404, "nope"),
    ({"flow": "registration", "version": "99"}, 404, "99"),
])
async def test_bad_preview_parameters_are_refused_with_a_sentence(harness: Harness, params: dict, status: int,
                                                                  words: str) -> None:
    answer = await harness.api("GET", f"/api/bots/{BOT}/publish/preview", params=params)
    assert answer.status_code == status and words in answer.json()["message"]


async def test_the_preview_without_a_version_looks_at_the_latest(harness: Harness) -> None:
    await talk(harness, 5501, AT_EMAIL)
    await add_version(harness, second_version())
    preview = await get(harness, f"/api/bots/{BOT}/publish/preview", flow="registration", sessions="migrate")
    assert (preview["version"], preview["dropped"]) == (2, 1)


async def test_a_point_of_a_live_dialog_copied_into_the_sandbox_continues_there(harness: Harness) -> None:
    from server.services import sandbox_copy

    await talk(harness, 5601, AT_EMAIL)
    timeline = await get(harness, f"/api/bots/{BOT}/users/5601/timeline")
    phone = next(n for n, e in enumerate(timeline) if e["kind"] == "message" and e["text"] == "+79991234567")
    point = await get(harness, f"/api/bots/{BOT}/users/5601/timeline/{phone}/state")
    assert point["session"]["state"] == "ask_phone"  # an update entry: the dialog before its turn
    async with harness.app.state.db.session() as s:
        sandbox_id, version = await sandbox_copy.copy_live(s, point["session"], BOT, "5601")
    assert version == 1
    opened = await get(harness, f"/api/flows/registration/simulate/{sandbox_id}", source="1")
    assert (opened["state"], opened["data"]) == ("ask_phone", {"name": "Иван"})
    assert opened["session"]["history"] == ["ask_name"]
    went_on = await harness.api("POST", "/api/flows/registration/simulate",
                                json={"session": sandbox_id, "update": {"text": "+79990001122"}, "source": 1})
    assert went_on.json()["state"] == "ask_email" and went_on.json()["data"]["phone"] == "+79990001122"
    live = await get(harness, f"/api/bots/{BOT}/users/5601/session")
    assert (live["state"], live["data"]["phone"]) == ("ask_email", "+79991234567")  # the live dialog is untouched


async def test_erasing_a_user_removes_the_sandbox_copies_of_their_dialogs(harness: Harness) -> None:
    from server.services import sandbox_copy

    copies = {}
    for user in (5701, 5702):
        await talk(harness, user, AT_PHONE)
        timeline = await get(harness, f"/api/bots/{BOT}/users/{user}/timeline")
        named = next(n for n, e in enumerate(timeline) if e["kind"] == "message" and e["text"] == "Иван")
        point = await get(harness, f"/api/bots/{BOT}/users/{user}/timeline/{named}/state")
        async with harness.app.state.db.session() as s:
            copies[user] = (await sandbox_copy.copy_live(s, point["session"], BOT, str(user)))[0]
    assert (await harness.api("DELETE", f"/api/bots/{BOT}/users/5701")).status_code == 204
    gone = await harness.api("GET", f"/api/flows/registration/simulate/{copies[5701]}", params={"source": "1"})
    assert gone.status_code == 404
    kept = await harness.api("GET", f"/api/flows/registration/simulate/{copies[5702]}", params={"source": "1"})
    assert kept.status_code == 200  # another user's copy stays
    assert "5701" not in copies[5701]  # the copy's id names the user only by a hash


async def test_reading_a_sandbox_that_does_not_exist_is_a_404(harness: Harness) -> None:
    answer = await harness.api("GET", "/api/flows/registration/simulate/live-nothing")
    assert answer.status_code == 404 and "live-nothing" in answer.json()["message"]
    answer = await harness.api("GET", "/api/flows/registration/simulate/live-nothing", params={"source": "v1"})
    assert answer.status_code == 422 and "source" in answer.json()["message"]


async def test_the_live_page_names_states_by_their_titles_with_the_id_on_hover(harness: Harness) -> None:
    await known_states(harness)
    page = (await harness.api("GET", f"/bots/{BOT}/dialogs")).text
    titles = {st["id"]: st["title"] for st in registration()["states"]}
    for sid in ("ask_name", "ask_phone", "ask_email"):
        assert f'title="{sid}">{titles[sid]}</td>' in page, sid
        assert f'class="mono">{sid}</td>' not in page
    assert 'title="registration">Регистрация</td>' in page  # the flow by its title too
    listed = (await harness.api("GET", f"/bots/{BOT}/dialogs", params={"part": "list", "user": "5201"},
                                headers={"HX-Request": "true"})).text
    assert f'title="ask_email">{titles["ask_email"]}</td>' in listed


async def test_a_transcript_names_states_by_their_titles(harness: Harness) -> None:
    await known_states(harness)
    page = (await harness.api("GET", f"/bots/{BOT}/dialogs/5201")).text
    assert "Now at Email (Регистрация, version 1)." in page  # the flow's title, not its id
    assert '<span title="ask_phone">Телефон</span>' in page
    assert '<span class="mono">ask_phone</span>' not in page
