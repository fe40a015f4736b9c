"""The translation table page: rows and columns, empty cells marked, the missing-only filter, a cell saved
in place, and a .po file uploaded through the page."""
from __future__ import annotations

import io

from babel.messages.pofile import read_po, write_po

from tests.integration.api_helpers import create_flow
from tests.integration.test_api_translations import trilingual
from tests.integration.test_hostile_forms import signed_in


async def test_the_table_marks_missing_cells_and_filters_them(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, trilingual("page"))
    page = await app_client.get("/flows/page/translations", headers=headers)
    assert page.status_code == 200
    assert page.text.count('<tr data-path=') == 6  # three messages, a button, the choices, the fallback
    assert 'class="missing"' in page.text and "Your colour?" in page.text
    only = await app_client.get("/flows/page/translations?missing=1", headers=headers)
    assert only.text.count('<tr data-path=') == 6  # Tatar is missing everywhere
    await app_client.patch("/api/flows/page/translations", headers=admin_headers,
                           json={"path": "settings.fallback", "language": "en", "text": "Sorry?"})
    await app_client.patch("/api/flows/page/translations", headers=admin_headers,
                           json={"path": "settings.fallback", "language": "tt", "text": "Аңламадым."})
    only = await app_client.get("/flows/page/translations?missing=1", headers=headers)
    assert only.text.count('<tr data-path=') == 5 and 'data-path="settings.fallback"' not in only.text


async def test_a_cell_is_saved_in_place_and_a_refusal_stays_in_its_row(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, trilingual("cellpage"))
    answer = await app_client.post("/flows/cellpage/translations/cell", headers={**headers, "HX-Request": "true"},
                                   data={"path": "states[0].say[0].text", "language": "tt", "text": "Төсегез?"})
    assert answer.status_code == 200 and answer.text.strip().startswith("<tr")
    doc = (await app_client.get("/api/flows/cellpage", headers=admin_headers)).json()
    assert doc["states"][0]["say"][0]["text"]["tt"] == "Төсегез?"
    refused = await app_client.post("/flows/cellpage/translations/cell", headers={**headers, "HX-Request": "true"},
                                    data={"path": "states[0].input.choices", "language": "ru", "text": ""})
    assert refused.status_code == 422 and refused.text.strip().startswith("<tr") and "at least one choice" in refused.text


async def test_a_po_file_uploaded_through_the_page_is_taken(app_client, admin_headers):
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, trilingual("upload"))
    exported = await app_client.get("/api/flows/upload/translations/en.po", headers=admin_headers)
    catalog = read_po(io.BytesIO(exported.content))
    for message in catalog:
        if message.id and message.id.startswith("settings.fallback\n"):
            message.string = "Sorry, again?"
    edited = io.BytesIO()
    write_po(edited, catalog)
    csrf = headers.get("X-CSRFToken", "")
    answer = await app_client.post("/flows/upload/translations/upload", headers=headers,
                                   data={"language": "en", "_csrf_token": csrf},
                                   files={"file": ("upload-en.po", edited.getvalue(), "text/x-gettext-translation")})
    assert answer.status_code == 200, answer.text
    assert "1 translation" in answer.text
    doc = (await app_client.get("/api/flows/upload", headers=admin_headers)).json()
    assert doc["settings"]["fallback"] == {"ru": "Не понял.", "en": "Sorry, again?"}


async def test_the_diff_of_two_versions_shows_changed_translations(app_client, admin_headers):
    from tests.integration.api_helpers import freeze
    headers = await signed_in(app_client, admin_headers)
    await create_flow(app_client, admin_headers, trilingual("diffed"))
    await freeze(app_client, admin_headers, "diffed", "first")
    await app_client.patch("/api/flows/diffed/translations", headers=admin_headers,
                           json={"path": "states[0].say[0].text", "language": "en", "text": "Which colour?"})
    await freeze(app_client, admin_headers, "diffed", "second")
    api = (await app_client.get("/api/flows/diffed/diff?from=1&to=2", headers=admin_headers)).json()
    assert api["translations"] == [{"path": "states[0].say[0].text", "language": "en", "from": "Your colour?",
                                    "to": "Which colour?", "state": "ask"}]
    assert api["states"]["changed"] == []
    page = await app_client.get("/flows/diffed/diff?a=1&b=2", headers={**headers, "HX-Request": "true"})
    assert page.status_code == 200
    assert "translation into English" in page.text and "Which colour?" in page.text and "«ask» · message 1" in page.text
