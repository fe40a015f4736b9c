"""Translations over HTTP: the table, one cell, and a gettext round trip through Babel that changes exactly
the entries a translator filled in."""
from __future__ import annotations

import copy
import io

from babel.messages.pofile import read_po, write_po

from tests.integration.api_helpers import create_flow
from tests.integration.test_api_simulate_languages import bilingual


def trilingual(flow_id: str) -> dict:
    doc = bilingual(flow_id)
    doc["languages"] = ["ru", "en", "tt"]
    doc["states"][0]["say"].append({"text": "Подсказка: {hint}",
                                    "buttons": [[{"text": "Помощь", "payload": "help"}]]})
    doc["settings"] = {"fallback": "Не понял."}
    return doc


async def draft(client, headers, flow_id):
    response = await client.get(f"/api/flows/{flow_id}", headers=headers)
    assert response.status_code == 200
    return response.json()


async def test_the_table_lists_every_text_with_its_languages_and_what_is_missing(app_client, admin_headers):
    await create_flow(app_client, admin_headers, trilingual("table"))
    response = await app_client.get("/api/flows/table/translations", headers=admin_headers)
    assert response.status_code == 200
    body = response.json()
    assert body["languages"] == ["ru", "en", "tt"] and body["default"] == "ru"
    by_path = {row["path"]: row for row in body["rows"]}
    assert by_path["states[0].say[0].text"]["texts"] == {"ru": "Ваш цвет?", "en": "Your colour?", "tt": ""}
    assert by_path["states[0].say[0].text"]["missing"] == ["tt"]
    assert by_path["states[0].input.choices"]["texts"]["en"] == "Red\nBlue"
    assert by_path["states[0].say[1].buttons[0][0].text"]["missing"] == ["en", "tt"]
    assert by_path["settings.fallback"]["state"] is None


async def test_one_cell_is_set_and_cleared(app_client, admin_headers):
    await create_flow(app_client, admin_headers, trilingual("cell"))
    url = "/api/flows/cell/translations"
    response = await app_client.patch(url, headers=admin_headers, json={
        "path": "states[0].say[1].text", "language": "tt", "text": "Ярдәм: {hint}"})
    assert response.status_code == 200, response.text
    doc = await draft(app_client, admin_headers, "cell")
    assert doc["states"][0]["say"][1]["text"] == {"ru": "Подсказка: {hint}", "tt": "Ярдәм: {hint}"}
    response = await app_client.patch(url, headers=admin_headers, json={
        "path": "states[0].say[1].text", "language": "tt", "text": ""})
    assert response.status_code == 200
    doc = await draft(app_client, admin_headers, "cell")
    assert doc["states"][0]["say"][1]["text"] == "Подсказка: {hint}"
    for body, status in (({"path": "states[9].say[0].text", "language": "en", "text": "x"}, 404),
                         ({"path": "states[0].say[0].text", "language": "de", "text": "x"}, 404),
                         ({"path": "states[0].input.choices", "language": "ru", "text": " \n"}, 422),
                         ({"path": 5, "language": "en", "text": "x"}, 422)):
        response = await app_client.patch(url, headers=admin_headers, json=body)
        assert response.status_code == status, (body, response.text)
        assert response.json()["message"]


async def test_a_po_round_trip_changes_the_document_exactly_where_the_translator_wrote(app_client, admin_headers):
    original = trilingual("po")
    await create_flow(app_client, admin_headers, original)
    before = await draft(app_client, admin_headers, "po")
    response = await app_client.get("/api/flows/po/translations/tt.po", headers=admin_headers)
    assert response.status_code == 200
    assert 'filename="po-tt.po"' in response.headers["content-disposition"]
    catalog = read_po(io.BytesIO(response.content))
    ids = {m.id.split("\n", 1)[0]: m for m in catalog if m.id}
    assert ids["states[0].say[1].text"].id == "states[0].say[1].text\nПодсказка: {hint}"
    assert all(not m.string for m in catalog if m.id)  # nothing is in Tatar yet
    # The translator fills two entries, one of them the choices, and leaves the rest empty.
    ids["states[0].say[1].text"].string = "Ярдәм: {hint}"
    ids["states[0].input.choices"].string = "Кызыл\nКүк"
    edited = io.BytesIO()
    write_po(edited, catalog)
    response = await app_client.put("/api/flows/po/translations/tt.po", headers=admin_headers,
                                    content=edited.getvalue())
    assert response.status_code == 200, response.text
    assert sorted(response.json()["changed"]) == ["states[0].input.choices", "states[0].say[1].text"]
    after = await draft(app_client, admin_headers, "po")
    expected = copy.deepcopy(before)
    expected["states"][0]["say"][1]["text"] = {"ru": "Подсказка: {hint}", "tt": "Ярдәм: {hint}"}
    expected["states"][0]["input"]["choices"]["tt"] = ["Кызыл", "Күк"]
    assert after == expected
    # The same file again changes nothing; a file for an entry whose source has changed since is not taken.
    again = await app_client.put("/api/flows/po/translations/tt.po", headers=admin_headers, content=edited.getvalue())
    assert again.json()["changed"] == []
    after["states"][0]["say"][1]["text"]["ru"] = "Совет: {hint}"
    response = await app_client.put("/api/flows/po", headers={**admin_headers, "If-Match": '"%s"' % again.json()["revision"]},
                                    json=after)
    assert response.status_code == 200, response.text
    ids["states[0].say[1].text"].string = "Киңәш: {hint}"
    stale = io.BytesIO()
    write_po(stale, catalog)
    response = await app_client.put("/api/flows/po/translations/tt.po", headers=admin_headers, content=stale.getvalue())
    assert response.json()["stale"] == ["states[0].say[1].text"]


async def test_po_refusals_say_what_to_do(app_client, admin_headers):
    await create_flow(app_client, admin_headers, trilingual("po_bad"))
    url = "/api/flows/po_bad/translations"
    assert (await app_client.get(f"{url}/ru.po", headers=admin_headers)).status_code == 422  # the default: the source
    assert (await app_client.get(f"{url}/de.po", headers=admin_headers)).status_code == 404
    response = await app_client.put(f"{url}/en.po", headers=admin_headers, content=b'msgid "a\nmsgstr')
    assert response.status_code == 422 and "exported here" in response.json()["message"]
    plain = bilingual("plain")
    del plain["languages"]
    plain["states"] = [{"id": "ask", "say": [{"text": "Hi"}]}]
    plain["transitions"] = []
    await create_flow(app_client, admin_headers, plain)
    response = await app_client.get("/api/flows/plain/translations", headers=admin_headers)
    assert response.status_code == 422 and "languages" in response.json()["message"]
