"""Live dialogs on a bot's page: dialogs put in known states by real webhooks, the list and its search, a
transcript, and "open in the simulator at this point" arriving at the state of that point. Screenshots go
to tests/artifacts/ (and /tmp/shots/live/)."""
from __future__ import annotations

import copy
import itertools
import shutil
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.conftest import MAX_TOKEN, App, shoot
from tests.e2e.test_flow_tests import registration

BOT, FLOW, SECRET = "live-bot", "e2e_live", "live_secret-1"
SHOTS = Path("/tmp/shots/live")
_mids = itertools.count(1)


def keep(page: Page, name: str) -> None:
    path = shoot(page, name)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SHOTS / path.name)


def deliver(app: App, user: int, text: str, bot: str = BOT) -> None:
    update = {"update_type": "message_created", "timestamp": 1785182044286, "user_locale": "ru",
              "message": {"sender": {"user_id": user, "first_name": "Иван", "is_bot": False},
                          "recipient": {"chat_id": user + 1_000_000, "chat_type": "dialog"},
                          "timestamp": 1785182044286,
                          "body": {"mid": f"mid.{next(_mids):032x}", "seq": 1, "text": text}}}
    answer = httpx.post(f"{app.url}/webhooks/max/{bot}", json=update, headers={"X-Max-Bot-Api-Secret": SECRET},
                        timeout=15)
    assert answer.status_code == 200, answer.text


def running_bot(app: App, bot: str = BOT, flow: str = FLOW) -> None:
    """The registration flow published to a bot; four dialogs in known states (two at ask_name, one at
    ask_phone, one at ask_email)."""
    if app.api("GET", f"/api/bots/{bot}").status_code == 200:
        return
    assert app.api("POST", "/api/flows", json=registration(flow)).status_code == 201
    assert app.api("POST", f"/api/flows/{flow}/versions", json={"note": "first"}).status_code == 201
    assert app.api("POST", "/api/bots", json={"id": bot, "title": "Live", "token": MAX_TOKEN,
                                              "webhook_secret": SECRET}).status_code == 201
    assert app.api("POST", f"/api/bots/{bot}/publish", json={"flow": flow, "version": 1}).status_code == 200
    for user, texts in ((710001, ["/start"]), (710002, ["/start"]), (720001, ["/start", "Иван"]),
                        (730001, ["/start", "Иван", "+79991234567"])):
        for text in texts:
            deliver(app, user, text, bot)


def test_the_live_list_counts_searches_and_shows_a_transcript(page: Page, app: App) -> None:
    running_bot(app)
    page.goto(f"{app.url}/bots/{BOT}")
    live = page.locator("#live-dialogs")
    expect(live.get_by_test_id("live-total")).to_have_text("4 dialogs running now")
    counts = live.get_by_test_id("live-counts")
    # Flows and states by their titles, the ids on hover.
    expect(counts.locator(f'td[title="{FLOW}"]')).to_have_count(3)
    expect(counts.locator(f'td[title="{FLOW}"]').first).to_have_text("Регистрация")
    expect(counts).not_to_contain_text(FLOW)
    expect(live.get_by_test_id("live-list").locator(f'td[title="{FLOW}"]').first).to_contain_text("Регистрация")
    expect(counts.locator('td[title="ask_name"]')).to_have_text("Имя")
    expect(counts.locator("tr", has_text="Имя")).to_contain_text("2")
    expect(counts.locator("tr", has_text="Телефон")).to_contain_text("1")
    expect(counts.locator("tr", has_text="Email")).to_contain_text("1")
    expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(4)
    page.get_by_label("User id or its beginning").fill("71")
    expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(2)
    expect(live.get_by_test_id("live-list")).not_to_contain_text("730001")
    page.get_by_label("User id or its beginning").fill("")
    expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(4)
    counts.locator("tr", has_text="Email").get_by_role("link").click()
    expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(1)
    live.locator('tr[data-user="730001"]').get_by_role("link", name="Transcript").click()
    transcript = page.get_by_test_id("transcript")
    expect(transcript.locator('li[data-kind="message"]')).to_have_count(3)
    expect(transcript.locator('li[data-kind="transition"]')).to_have_count(2)
    expect(transcript.locator('li[data-kind="reply"]').first).to_contain_text("Как вас зовут")
    expect(transcript.locator('li[data-kind="transition"]').first).to_contain_text("Телефон")
    expect(transcript.locator('li[data-kind="transition"] [title="ask_phone"]').first).to_have_text("Телефон")
    expect(page.locator("#live-transcript")).to_contain_text("Now at Email (Регистрация, version 1).")
    page.locator(".card.live").scroll_into_view_if_needed()
    keep(page, "live-dialogs-transcript")


def test_an_ended_dialog_is_found_by_its_user_id_and_its_transcript_read(page: Page, app: App) -> None:
    running_bot(app)
    for text in ("/start", "/cancel"):
        deliver(app, 740001, text)
    page.goto(f"{app.url}/bots/{BOT}")
    live = page.locator("#live-dialogs")
    page.get_by_label("User id or its beginning").fill("740001")
    expect(live.get_by_test_id("live-list")).to_contain_text("No running dialog matches.")
    live.get_by_test_id("ended-transcript").get_by_role("link", name="Read their transcript").click()
    transcript = page.get_by_test_id("transcript")
    expect(transcript.locator('li[data-kind="command:cancel"]')).to_have_count(1)
    expect(page.locator("#live-transcript")).to_contain_text("No dialog is running for this user now.")
    page.get_by_label("User id or its beginning").fill("71000")  # a beginning: the running ones are listed
    expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(2)
    expect(live.get_by_test_id("ended-transcript")).to_have_count(1)
    page.get_by_label("User id or its beginning").fill("710001")  # running: its row has the transcript
    expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(1)
    expect(live.get_by_test_id("ended-transcript")).to_have_count(0)


def test_open_in_the_simulator_arrives_at_the_state_of_that_point(page: Page, app: App) -> None:
    running_bot(app)
    page.goto(f"{app.url}/bots/{BOT}/dialogs/730001")
    transcript = page.get_by_test_id("transcript")
    # The second message ("Иван") is an update entry: it opens the dialog as it was before that turn.
    name_entry = transcript.locator('li[data-kind="message"]').nth(1)
    expect(name_entry).to_contain_text("Иван")
    name_entry.get_by_role("button", name="Open in the simulator at this point").click()
    page.wait_for_url(f"**/flows/{FLOW}/edit?*")
    sim = page.locator("#simulator")
    expect(sim.locator("[data-sim-state]")).to_have_text("ask_name")
    expect(sim.locator("[data-sim-state-title]")).to_have_text("«Имя»")  # the state's title beside its id
    expect(sim.locator("[data-sim-log]")).to_contain_text("live dialog of user 730001")
    expect(sim.locator("[data-sim-source]")).to_have_value("1")
    # What the live dialog said before that point, greyed: the greeting and the /start, not "Иван".
    expect(sim.locator(".sim-earlier")).to_have_count(2)
    expect(sim.locator(".sim-bot.sim-earlier")).to_have_text("Привет! Как вас зовут?")
    keep(page, "live-dialog-opened-in-simulator")
    sim.locator("[data-sim-input]").fill("Пётр")
    sim.locator("[data-sim-form] button[type=submit]").click()
    expect(sim.locator("[data-sim-state]")).to_have_text("ask_phone")
    expect(sim.locator("[data-sim-state-title]")).to_have_text("«Телефон»")
    expect(sim.locator("[data-sim-data]")).to_contain_text("Пётр")
    keep(page, "live-dialog-in-simulator")
    live = app.api("GET", f"/api/bots/{BOT}/users/730001/session").json()
    assert (live["state"], live["data"]) == ("ask_email", {"name": "Иван", "phone": "+79991234567"})


def test_a_viewer_reads_transcripts_but_cannot_open_the_simulator(context, app: App, watch) -> None:
    from tests.e2e.conftest import login

    running_bot(app)
    page = login(context, app, "vera", watch)
    page.goto(f"{app.url}/bots/{BOT}/dialogs/720001")
    expect(page.get_by_test_id("transcript").locator("li")).not_to_have_count(0)
    expect(page.get_by_role("button", name="Open in the simulator at this point")).to_have_count(0)


def test_the_publish_form_shows_what_the_publish_does_and_the_history_keeps_it(page: Page, app: App) -> None:
    bot, flow = "preview-bot", "e2e_preview"
    running_bot(app, bot, flow)
    draft = app.api("GET", f"/api/flows/{flow}")
    changed = copy.deepcopy(draft.json())
    for state in changed["states"]:
        state["id"] = "ask_mail" if state["id"] == "ask_email" else state["id"]
    for tr in changed["transitions"]:
        for end in ("from", "to"):
            tr[end] = "ask_mail" if tr[end] == "ask_email" else tr[end]
    assert app.api("PUT", f"/api/flows/{flow}", json=changed,
                   headers={"If-Match": draft.headers["etag"]}).status_code == 200
    assert app.api("POST", f"/api/flows/{flow}/versions", json={"note": "ask_mail"}).status_code == 201
    saved = app.api("GET", f"/api/flows/{flow}/tests")
    wrong = {"name": "starts elsewhere", "steps": [{"update": {"text": "/start"}, "expect": {"state": "ask_phone"}}]}
    assert app.api("PUT", f"/api/flows/{flow}/tests", json={"tests": [wrong]},
                   headers={"If-Match": saved.headers["etag"]}).status_code == 200
    page.goto(f"{app.url}/flows/{flow}/versions")
    page.locator("#publish-bot").select_option(bot)
    page.locator("#publish-version").select_option("2")
    preview = page.get_by_test_id("publish-preview")
    expect(preview).to_contain_text("4 dialogs are running now.")
    expect(preview).to_contain_text("All of them finish on the version they started on.")
    expect(preview.get_by_test_id("tests-failing")).to_contain_text("On version 2, the flow's saved test fails: «starts elsewhere».")
    page.get_by_label("migrate", exact=False).check()
    expect(preview).to_contain_text("3 continue, 1 is dropped.")
    expect(preview.locator("tr.dropped")).to_have_count(1)
    expect(preview.locator("tr.dropped")).to_contain_text("ask_email")
    preview.scroll_into_view_if_needed()
    keep(page, "publish-preview-migrate")
    page.get_by_label("reset", exact=False).check()
    expect(preview).to_contain_text("0 continue, 4 are dropped.")
    page.get_by_label("migrate", exact=False).check()
    expect(preview).to_contain_text("3 continue, 1 is dropped.")
    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.locator("#publish-result")).to_contain_text("now serves")
    page.goto(f"{app.url}/bots/{bot}")
    history = page.get_by_test_id("publications")
    expect(history.locator("tbody tr").first).to_contain_text("4 running: 3 continued, 1 dropped")
    expect(page.locator("#live-dialogs").get_by_test_id("live-total")).to_have_text("3 dialogs running now")
    rollback = history.locator("tbody tr").nth(1)
    asked: list[str] = []
    page.on("dialog", lambda dialog: asked.append(dialog.message))  # the page's watch accepts confirms
    rollback.get_by_label("Running dialogs:").select_option("reset")
    expect(rollback.get_by_test_id("publish-preview")).to_contain_text("0 continue, 3 are dropped.")
    assert asked == []  # choosing what happens to running dialogs only previews: nothing to confirm yet
    history.scroll_into_view_if_needed()
    keep(page, "publish-history-counts")
    rollback.get_by_role("button", name="Roll back to version 1").click()
    title = app.api("GET", f"/api/bots/{bot}").json()["title"] or bot
    flow_title = app.api("GET", f"/api/flows/{flow}").json()["title"] or flow
    expect(page.locator("#rollback-result")).to_contain_text(f"{title} now serves {flow_title} version 1")
    assert asked == [f"Make {title} serve {flow} version 1 again?"]  # asked first, in words
    expect(page.locator("#bot-serving")).to_contain_text("version 1")  # the header, without a reload
    expect(history.locator("tbody tr").first).to_contain_text("version 1")
    expect(history.get_by_role("button", name="Roll back to version 1")).to_have_count(0)  # it is what runs
    expect(history.get_by_role("button", name="Roll back to version 2")).to_have_count(1)
    # "reset" dropped the running dialogs: the live list counts again by itself
    expect(page.locator("#live-dialogs")).to_contain_text("No dialog is running now.")
    page.locator("#rollback-result").scroll_into_view_if_needed()
    keep(page, "rolled-back")


def test_the_live_dialogs_and_the_transcript_in_russian(browser, app: App, watch) -> None:
    from tests.e2e.conftest import PASSWORD
    from tests.e2e.conftest import login

    running_bot(app)
    made = app.api("POST", "/api/users", json={"username": "lena", "role": "editor", "password": PASSWORD})
    assert made.status_code == 201, made.text
    ctx = browser.new_context(viewport={"width": 1500, "height": 900}, locale="ru-RU")
    try:
        page = login(ctx, app, "lena", watch)
        page.goto(f"{app.url}/bots/{BOT}")
        live = page.locator(".card.live")
        expect(live.locator("h2")).to_have_text("Живые диалоги")
        expect(live.get_by_test_id("live-total")).to_have_text("4 диалога идут сейчас")
        counts = live.get_by_test_id("live-counts")
        expect(counts.locator(f'td[title="{FLOW}"]').first).to_have_text("Регистрация")
        expect(counts).not_to_contain_text(FLOW)
        live.locator('tr[data-user="720001"]').get_by_role("link", name="Расшифровка").click()
        transcript = page.get_by_test_id("transcript")
        expect(transcript.locator('li[data-kind="reply"]').first).to_contain_text("бот ответил")
        # The engine's steps are said in Russian from their kind and states; its English reason stays folded.
        expect(transcript.locator('li[data-kind="transition"] [data-testid="tr-explained"]').first).to_contain_text(
            "Переход из «")
        expect(transcript.get_by_role("button", name="Открыть в симуляторе с этой точки").first).to_be_visible()
        expect(page.locator("#live-transcript")).to_contain_text("Сейчас: «Телефон» (Регистрация, версия 1).")
        live.scroll_into_view_if_needed()
        keep(page, "ru-live-dialogs-transcript")
    finally:
        ctx.close()


def test_an_erased_user_leaves_the_live_list_without_a_reload(browser, app: App, watch) -> None:
    from tests.e2e.conftest import russian_page

    bot = "erase-live-bot"
    running_bot(app, bot, "e2e_erase_live")
    with russian_page(browser, app, watch, "erase_live_ru", "admin") as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(f"{app.url}/bots/{bot}")
        live = page.locator("#live-dialogs")
        expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(4)
        card = page.locator("#bot-privacy")
        card.get_by_label("id пользователя MAX").fill("720001")
        card.get_by_role("button", name="Удалить данные пользователя").click()  # confirmed by `watch`
        expect(card.locator(".notice.ok")).to_contain_text("720001")
        expect(live.get_by_test_id("live-list").locator("tbody tr")).to_have_count(3)
        expect(live.locator('tr[data-user="720001"]')).to_have_count(0)
        expect(live.get_by_test_id("live-total")).to_have_text("3 диалога идут сейчас")
        page.locator(".card.live").scroll_into_view_if_needed()
        keep(page, "ru-live-list-after-erasure")
