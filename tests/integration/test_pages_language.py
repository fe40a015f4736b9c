"""Designer pages over HTTP: the language chosen, pages for browsers where nothing is, one-request form answers."""
from __future__ import annotations

import json
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from litestar.testing import AsyncTestClient

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "registration.json"


class FormFields(HTMLParser):
    """The values a browser would post for the first form of a page (text, ticked boxes, chosen options)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[tuple[str, str]] = []
        self.select: str | None = None
        self.area: str | None = None
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if self.done or not a.get("name") and tag != "option":
            return
        if tag == "input" and a.get("type") not in ("checkbox", "radio", "submit") or \
                tag == "input" and "checked" in a:
            self.fields.append((a["name"], a.get("value", "on" if a.get("type") == "checkbox" else "")))
        elif tag == "select":
            self.select = a["name"]
        elif tag == "option" and self.select and "selected" in a:
            self.fields.append((self.select, a.get("value", "")))
        elif tag == "textarea":
            self.area = a["name"]
            self.fields.append((self.area, ""))

    def handle_data(self, data: str) -> None:
        if self.area:
            self.fields[-1] = (self.area, self.fields[-1][1] + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.select = None
        elif tag == "textarea":
            self.area = None
        elif tag == "form":
            self.done = True


def form_of(html: str) -> dict[str, Any]:
    parser = FormFields()
    parser.feed(html)
    out: dict[str, Any] = {}
    for name, value in parser.fields:
        out.setdefault(name, []).append(value)
    return out


async def new_flow(client: AsyncTestClient, headers: dict[str, str], flow_id: str) -> str:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["id"] = flow_id
    answer = await client.post("/api/flows", json=doc, headers=headers)
    assert answer.status_code == 201, answer.text
    return answer.headers["ETag"].strip('"')


async def test_the_language_follows_the_browser_then_the_switch(app_client: AsyncTestClient,
                                                                admin_headers: dict[str, str]) -> None:
    russian = await app_client.get("/flows", headers={**admin_headers, "Accept-Language": "ru-RU,ru;q=0.9"})
    assert '<html lang="ru">' in russian.text and "Сценарии" in russian.text
    script = russian.text.split('id="botflow-i18n">', 1)[1].split("</script>", 1)[0]
    assert json.loads(script)["All changes saved"] == "Всё сохранено"  # the scripts' catalogue
    english = await app_client.get("/flows", headers={**admin_headers, "Accept-Language": "en-GB"})
    assert '<html lang="en">' in english.text and "Сценарии" not in english.text

    switch = await app_client.get("/language/en?next=/flows", follow_redirects=False)
    assert switch.status_code == 303 and switch.headers["location"] == "/flows"
    assert "botflow_lang=en" in switch.headers["set-cookie"]
    chosen = await app_client.get("/flows", headers={**admin_headers, "Accept-Language": "ru"})
    assert '<html lang="en">' in chosen.text
    away = await app_client.get("/language/ru?next=//evil.example/", follow_redirects=False)
    assert away.headers["location"] == "/flows"


async def test_browsers_get_a_page_where_nothing_is_and_programs_json(app_client: AsyncTestClient) -> None:
    page = await app_client.get("/no/such/page", headers={"Accept": "text/html", "Accept-Language": "ru"})
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "Страница не найдена" in page.text and "/schema" not in page.text
    api = await app_client.get("/api/no/such", headers={"Accept": "text/html"})
    assert api.status_code == 404 and api.json()["error"] == "not_found"
    program = await app_client.get("/no/such/page", headers={"Accept": "application/json"})
    assert program.status_code == 404 and program.json()["error"] == "not_found"
    icon = await app_client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")


async def test_a_form_answer_carries_the_stored_draft_and_the_issues(app_client: AsyncTestClient,
                                                                    admin_headers: dict[str, str]) -> None:
    revision = await new_flow(app_client, admin_headers, "answered")
    form = await app_client.get("/flows/answered/edit/state/ask_phone", headers={**admin_headers, "HX-Request": "true"})
    fields = form_of(form.text)
    fields.update(title=["Телефон клиента"], final=["on"])
    csrf = app_client.cookies.get("csrftoken", "")
    answer = await app_client.post("/flows/answered/edit/state/ask_phone", data=fields,
                                   headers={**admin_headers, "HX-Request": "true", "X-CSRFToken": csrf,
                                            "If-Match": f'"{revision}"'})
    assert answer.status_code == 200, answer.text
    new_revision = answer.headers["X-Botflow-Revision"]
    assert new_revision != revision and "X-Botflow-Rejected" not in answer.headers
    stored = (await app_client.get("/api/flows/answered", headers=admin_headers)).json()
    start = answer.text.index('id="draft-answer"')
    document = answer.text[answer.text.index("data-document='", start) + 15:]
    assert json.loads(unescape(document[:document.index("'")])) == stored
    assert 'id="issues-pane"' in answer.text and 'hx-swap-oob="true"' in answer.text
    assert 'data-code="final_has_exit"' in answer.text  # a final state with a way out: its issue came along


async def test_a_refused_form_is_marked_and_saves_nothing(app_client: AsyncTestClient,
                                                          admin_headers: dict[str, str]) -> None:
    revision = await new_flow(app_client, admin_headers, "refused")
    form = await app_client.get("/flows/refused/edit/transition/pdn_yes_button",
                                headers={**admin_headers, "HX-Request": "true"})
    fields = form_of(form.text)
    fields.update(payload=[""])
    csrf = app_client.cookies.get("csrftoken", "")
    answer = await app_client.post("/flows/refused/edit/transition/pdn_yes_button", data=fields,
                                   headers={**admin_headers, "HX-Request": "true", "X-CSRFToken": csrf,
                                            "Accept-Language": "ru", "If-Match": f'"{revision}"'})
    assert answer.status_code == 200
    assert answer.headers["X-Botflow-Rejected"] == "1" and "X-Botflow-Revision" not in answer.headers
    assert 'aria-invalid="true"' in answer.text and 'data-error-for="payload"' in answer.text
    assert "Введите код кнопки" in answer.text
    stored = (await app_client.get("/api/flows/refused", headers=admin_headers))
    assert stored.headers["ETag"].strip('"') == revision


async def test_a_lapsed_session_inside_a_page_says_so_in_place(app_client: AsyncTestClient) -> None:
    answer = await app_client.get("/flows/any/edit/state/ask", headers={
        "HX-Request": "true", "HX-Current-URL": "http://testserver/flows/any/edit", "Accept-Language": "en"})
    assert answer.status_code == 401
    assert "Your session has expired" in answer.text and "Bearer" not in answer.text
    assert 'href="/login?next=%2Fflows%2Fany%2Fedit"' in answer.text
    page = await app_client.get("/flows/any/edit", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login?next=%2Fflows%2Fany%2Fedit"


async def test_the_switch_is_kept_on_the_user_for_their_other_browsers(app_client: AsyncTestClient,
                                                                       admin_headers: dict[str, str]) -> None:
    await app_client.get("/language/ru?next=/flows", headers=admin_headers, follow_redirects=False)
    app_client.cookies.clear()  # another browser: no cookie, an English browser
    page = await app_client.get("/flows", headers={**admin_headers, "Accept-Language": "en-US"})
    assert '<html lang="ru">' in page.text
    assert "botflow_lang=ru" in page.headers.get("set-cookie", "")  # remembered, no lookup next time
    app_client.cookies.clear()
    await app_client.get("/language/en?next=/flows", headers=admin_headers, follow_redirects=False)
    app_client.cookies.clear()
    again = await app_client.get("/flows", headers={**admin_headers, "Accept-Language": "ru"})
    assert '<html lang="en">' in again.text
    app_client.cookies.clear()
    anonymous = await app_client.get("/login", headers={"Accept-Language": "ru"})
    assert '<html lang="ru">' in anonymous.text and "botflow_lang" not in anonymous.headers.get("set-cookie", "")


async def test_freeze_answers_with_the_page_parts_it_changes(app_client: AsyncTestClient,
                                                            admin_headers: dict[str, str]) -> None:
    await new_flow(app_client, admin_headers, "frozen")
    await app_client.get("/flows/frozen/versions", headers=admin_headers)
    csrf = app_client.cookies.get("csrftoken", "")
    answer = await app_client.post("/flows/frozen/versions", data={"note": "first"},
                                   headers={**admin_headers, "HX-Request": "true", "X-CSRFToken": csrf})
    assert answer.status_code == 200 and "Version 1 frozen: first." in answer.text
    for part in ('id="versions-table" hx-swap-oob="innerHTML"', 'id="publish-version" hx-swap-oob="outerHTML"',
                 'id="compare-refs" class="inline" hx-swap-oob="outerHTML"'):
        assert part in answer.text, part
    download = await app_client.get("/flows/frozen/versions/1/download", headers=admin_headers)
    assert download.status_code == 200 and download.json()["id"] == "frozen"
    assert download.headers["content-disposition"] == 'attachment; filename="frozen-v1.json"'


async def test_refusals_of_the_versions_page_speak_russian(app_client: AsyncTestClient,
                                                          admin_headers: dict[str, str]) -> None:
    await new_flow(app_client, admin_headers, "frozen")
    app_client.cookies.set("botflow_lang", "ru")
    ru = admin_headers
    await app_client.get("/flows/frozen/versions", headers=ru)
    csrf = app_client.cookies.get("csrftoken", "")
    long_note = await app_client.post("/flows/frozen/versions", data={"note": "н" * 2001},
                                      headers={**ru, "HX-Request": "true", "X-CSRFToken": csrf})
    assert long_note.status_code == 422 and "В заметке 2001 символов; уложитесь в 2000." in long_note.text
    assert (await app_client.get("/api/flows/frozen/versions", headers=admin_headers)).json() == []
    not_a_ref = await app_client.get("/flows/frozen/versions/abc/download", headers=ru)
    assert not_a_ref.status_code == 400 and "«abc» — не номер версии" in not_a_ref.text
    no_such = await app_client.get("/flows/frozen/diff?a=draft&b=0", headers={**ru, "HX-Request": "true"})
    assert no_such.status_code == 404 and "У сценария «frozen» нет версии «0»" in no_such.text


async def test_the_loaders_complaints_in_forms_speak_russian(app_client: AsyncTestClient,
                                                             admin_headers: dict[str, str]) -> None:
    revision = await new_flow(app_client, admin_headers, "loaderru")
    ru = {**admin_headers, "HX-Request": "true", "Accept-Language": "ru", "If-Match": f'"{revision}"'}
    form = form_of((await app_client.get("/flows/loaderru/edit/settings", headers=ru)).text)
    csrf = app_client.cookies.get("csrftoken", "")
    posted = {**form, "settings.session_ttl": ["99999999"],
              "settings.session_ttl.unit": ["s"]}
    answer = await app_client.post("/flows/loaderru/edit/settings", data=posted, headers={**ru, "X-CSRFToken": csrf})
    assert answer.headers["X-Botflow-Rejected"] == "1"
    assert "не больше года (31 536 000 секунд)" in answer.text and "seconds (a year)" not in answer.text
    posted = {**form, "settings.session_ttl": ["100"], "settings.reminder.enabled": ["on"],
              "settings.session_ttl.unit": ["s"], "settings.reminder.after.unit": ["s"], "settings.reminder.after": ["200"], "settings.reminder.text": ["Вы здесь?"]}
    answer = await app_client.post("/flows/loaderru/edit/settings", data=posted, headers={**ru, "X-CSRFToken": csrf})
    assert "напоминание (через 200 с) должно прийти раньше, чем диалог истечёт (через 100 с)" in unescape(answer.text)
    state = form_of((await app_client.get("/flows/loaderru/edit/state/ask_name", headers=ru)).text)
    posted = {**state, "input.save_as": ["1 имя"]}
    answer = await app_client.post("/flows/loaderru/edit/state/ask_name", data=posted,
                                   headers={**ru, "X-CSRFToken": csrf})
    assert "«1 имя» не годится как имя поля" in unescape(answer.text) and "data key" not in answer.text
    stored = await app_client.get("/api/flows/loaderru", headers=admin_headers)
    assert stored.headers["ETag"].strip('"') == revision


async def test_the_save_as_example_fits_the_input(app_client: AsyncTestClient, admin_headers: dict[str, str]) -> None:
    await new_flow(app_client, admin_headers, "examples")
    headers = {**admin_headers, "HX-Request": "true"}
    for state, example in (("ask_name", "name"), ("ask_email", "email"), ("ask_phone", "phone")):
        form = (await app_client.get(f"/flows/examples/edit/state/{state}", headers=headers)).text
        field = next(line for line in form.splitlines() if 'name="input.save_as"' in line)
        assert f'placeholder="{example}"' in field, (state, field)


async def test_the_state_panel_chooses_what_a_press_does_to_its_buttons(app_client: AsyncTestClient,
                                                                       admin_headers: dict[str, str]) -> None:
    revision = await new_flow(app_client, admin_headers, "pressed")
    headers = {**admin_headers, "HX-Request": "true", "Accept-Language": "ru"}
    form = await app_client.get("/flows/pressed/edit/state/ask_pdn", headers=headers)
    assert "Когда нажата кнопка" in form.text and "заменить кнопки текстом нажатой" in form.text
    fields = form_of(form.text)
    assert fields["after_press"] == ["keep"]
    fields.update(after_press=["replace"])
    csrf = app_client.cookies.get("csrftoken", "")
    answer = await app_client.post("/flows/pressed/edit/state/ask_pdn", data=fields,
                                   headers={**headers, "X-CSRFToken": csrf, "If-Match": f'"{revision}"'})
    assert answer.status_code == 200 and "X-Botflow-Rejected" not in answer.headers, answer.text
    stored = (await app_client.get("/api/flows/pressed", headers=admin_headers)).json()
    assert [s.get("after_press") for s in stored["states"] if s["id"] == "ask_pdn"] == ["replace"]
    fields.update(after_press=["explode"])
    refused = await app_client.post("/flows/pressed/edit/state/ask_pdn", data=fields,
                                    headers={**headers, "X-CSRFToken": csrf,
                                             "If-Match": f'"{answer.headers["X-Botflow-Revision"]}"'})
    assert "Выберите, что нажатая кнопка делает со своим сообщением." in refused.text
