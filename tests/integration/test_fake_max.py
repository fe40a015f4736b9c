"""The fake MAX server speaks the documented protocol and enforces its limits, over real HTTP."""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import httpx
import pytest

from tests.fakemax import FAKE_TOKEN, FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)

AUTH = {"Authorization": FAKE_TOKEN}


@pytest.fixture
def http(fake_max: FakeMax):
    with httpx.Client(base_url=fake_max.url, headers=AUTH, timeout=10) as client:
        yield client


def body(text: str | None, **fields: object) -> dict:
    """A NewMessageBody as the schema requires it (text, attachments and link)."""
    return {"text": text, "attachments": [], "link": None, **fields}


def keyboard(*buttons: dict) -> dict:
    return body("choose", attachments=[{"type": "inline_keyboard", "payload": {"buttons": [list(buttons)]}}])


def assert_refused(response: httpx.Response, status: int = 400, code: str = "proto.payload") -> None:
    assert response.status_code == status, response.text
    assert response.json()["code"] == code
    assert response.json()["message"]


def test_every_call_needs_a_configured_token(fake_max: FakeMax) -> None:
    with httpx.Client(base_url=fake_max.url) as client:
        assert_refused(client.get("/me"), 401, "verify.token")
        assert_refused(client.get("/me", headers={"Authorization": "wrong"}), 401, "verify.token")
        assert_refused(client.get("/me", headers={"Authorization": f"Bearer {FAKE_TOKEN}"}), 401, "verify.token")
        me = client.get("/me", headers=AUTH)
    assert me.status_code == 200 and me.json()["is_bot"] is True


def test_send_answers_like_the_real_api(http: httpx.Client, fake_max: FakeMax) -> None:
    first = http.post("/messages", params={"user_id": 7}, json=body("one")).json()["message"]
    second = http.post("/messages", params={"chat_id": -5}, json=keyboard(
        {"type": "callback", "text": "Да", "payload": "yes"})).json()["message"]
    assert first["recipient"]["user_id"] == 7 and second["recipient"]["chat_id"] == -5
    assert first["body"]["text"] == "one" and first["body"]["mid"] != second["body"]["mid"]
    assert second["body"]["attachments"][0]["type"] == "inline_keyboard"
    assert [m["text"] for m in fake_max.sent_messages()] == ["one", "choose"]
    assert fake_max.sent_messages(user_id=7) == [body("one")]


def test_send_needs_a_recipient_and_a_json_object(http: httpx.Client) -> None:
    assert_refused(http.post("/messages", json=body("x")))
    assert_refused(http.post("/messages", params={"chat_id": "abc"}, json=body("x")))
    assert_refused(http.post("/messages", params={"chat_id": 1}, content=b"{not json"))
    assert_refused(http.post("/messages", params={"chat_id": 1}, json=["text"]))
    assert_refused(http.post("/messages", params={"chat_id": 1}, json={}))


def test_text_limit_is_4000_characters(http: httpx.Client) -> None:
    assert http.post("/messages", params={"chat_id": 1}, json=body("я" * 4000)).status_code == 200
    assert_refused(http.post("/messages", params={"chat_id": 1}, json=body("я" * 4001)))
    assert_refused(http.post("/messages", params={"chat_id": 1}, json=body("x", attachments={})))
    assert_refused(http.post("/messages", params={"chat_id": 1}, json=body("x", format="bbcode")))


def test_button_limits(http: httpx.Client) -> None:
    def send(button: dict) -> httpx.Response:
        return http.post("/messages", params={"chat_id": 1}, json=keyboard(button))

    assert send({"type": "callback", "text": "x" * 128, "payload": "p" * 1024}).status_code == 200
    assert_refused(send({"type": "callback", "text": "x" * 129, "payload": "p"}))
    assert_refused(send({"type": "callback", "text": "", "payload": "p"}))
    assert_refused(send({"type": "callback", "text": "x", "payload": "p" * 1025}))
    assert_refused(send({"type": "callback", "text": "x"}))
    assert_refused(send({"type": "link", "text": "x"}))
    assert_refused(send({"type": "teleport", "text": "x"}))
    for kind in ("message", "request_contact", "request_geo_location"):
        assert send({"type": kind, "text": "x"}).status_code == 200
    assert send({"type": "link", "text": "x", "url": "https://example.org"}).status_code == 200
    assert_refused(http.post("/messages", params={"chat_id": 1},
                             json=body("x", attachments=[{"type": "inline_keyboard", "payload": {}}])))


def test_answers(http: httpx.Client, fake_max: FakeMax) -> None:
    ok = http.post("/answers", params={"callback_id": "cb-1"}, json={"notification": "ok"})
    assert ok.json() == {"success": True}
    assert http.post("/answers", params={"callback_id": "cb-4"}, json={}).json() == {"success": True}
    assert_refused(http.post("/answers", json={"notification": "ok"}))
    assert_refused(http.post("/answers", params={"callback_id": "cb-5"}, json={"message": None, "notification": "ok"}))
    assert_refused(http.post("/answers", params={"callback_id": "cb-2"}, json={"message": body("x" * 4001)}))
    assert_refused(http.post("/answers", params={"callback_id": "cb-6"}, json={"message": {"text": "no link"}}))
    assert_refused(http.post("/answers", params={"callback_id": "cb-3"}, json={"notification": 5}))
    assert fake_max.answers() == [{"callback_id": "cb-1", "message": None, "notification": "ok"},
                                  {"callback_id": "cb-4", "message": None, "notification": None}]


def test_subscriptions_check_url_and_secret(http: httpx.Client, fake_max: FakeMax) -> None:
    url = "https://bots.example/hook"
    assert_refused(http.post("/subscriptions", json={"url": "http://bots.example/hook", "secret": "abcde"}))
    for refused in ("https://bots.example:8443/hook", "https://203.0.113.7/hook", "https://[2001:db8::1]/hook"):
        assert_refused(http.post("/subscriptions", json={"url": refused, "secret": "abcde"}))
    assert_refused(http.post("/subscriptions", json={"url": url, "secret": "abcd"}))
    assert_refused(http.post("/subscriptions", json={"url": url, "secret": "a" * 257}))
    assert_refused(http.post("/subscriptions", json={"url": url, "secret": "bad secret!"}))
    assert http.post("/subscriptions", json={"url": url, "secret": "Ab_-9" * 2,
                                             "update_types": ["bot_started"]}).json() == {"success": True}
    listed = http.get("/subscriptions").json()["subscriptions"]
    assert [(s["url"], s["update_types"]) for s in listed] == [(url, ["bot_started"])]
    assert "secret" not in listed[0], "the API never shows the secret back"
    assert_refused(http.delete("/subscriptions"))
    assert http.delete("/subscriptions", params={"url": url}).json() == {"success": True}
    assert http.get("/subscriptions").json() == {"subscriptions": []}


def test_long_poll_marker_limit_and_types(http: httpx.Client, fake_max: FakeMax) -> None:
    threading.Timer(0.2, fake_max.push_update, [{"update_type": "message_created", "n": 0}]).start()
    started = time.monotonic()
    got = http.get("/updates", params={"timeout": 5}).json()
    assert [u["n"] for u in got["updates"]] == [0] and time.monotonic() - started < 4
    for n in (1, 2, 3):
        fake_max.push_update({"update_type": "bot_started" if n == 3 else "message_created", "n": n})
    page = http.get("/updates", params={"marker": got["marker"], "limit": 2, "timeout": 0}).json()
    assert [u["n"] for u in page["updates"]] == [1, 2]
    typed = http.get("/updates", params={"marker": page["marker"], "types": "bot_started", "timeout": 0}).json()
    assert [u["n"] for u in typed["updates"]] == [3]
    assert http.get("/updates", params={"marker": typed["marker"], "timeout": 0}).json()["updates"] == []
    assert_refused(http.get("/updates", params={"timeout": 91}))
    assert_refused(http.get("/updates", params={"limit": 0}))


def test_updates_belong_to_their_bot() -> None:
    with FakeMax(tokens={"bot-a", "bot-b"}) as fake, httpx.Client(base_url=fake.url) as client:
        fake.push_update({"update_type": "bot_started"}, token="bot-a")
        with pytest.raises(ValueError):
            fake.push_update({"update_type": "bot_started"})
        b = client.get("/updates", params={"timeout": 0}, headers={"Authorization": "bot-b"}).json()
        a = client.get("/updates", params={"timeout": 0}, headers={"Authorization": "bot-a"}).json()
    assert (len(a["updates"]), len(b["updates"])) == (1, 0)


def test_failures_delays_and_down_mode(http: httpx.Client, fake_max: FakeMax) -> None:
    fake_max.fail_next(2, status=429, path="/answers")
    assert http.get("/me").status_code == 200, "a path-scoped failure leaves other paths alone"
    assert [http.post("/answers", params={"callback_id": "c"}, json={}).status_code for _ in range(3)] == [429, 429, 200]
    fake_max.delay_next(1, 0.5)
    started = time.monotonic()
    assert http.get("/me").status_code == 200 and time.monotonic() - started >= 0.45
    fake_max.set_down(True)
    assert_refused(http.get("/me"), 503, "service.unavailable")
    fake_max.set_down(False)
    assert http.get("/me").status_code == 200
    assert_refused(http.get("/nowhere"), 404, "not.found")
    assert_refused(http.put("/messages"), 405, "method.not.allowed")


def test_calls_are_recorded_in_order_without_the_token(http: httpx.Client, fake_max: FakeMax) -> None:
    http.get("/me")
    http.post("/messages", params={"chat_id": 3}, json=body("hi"))
    calls = fake_max.calls
    assert [(c["method"], c["path"], c["status"]) for c in calls] == [("GET", "/me", 200), ("POST", "/messages", 200)]
    assert calls[1]["json"] == body("hi") and calls[1]["query"] == {"chat_id": "3"}
    assert FAKE_TOKEN not in str(calls)
    assert fake_max.counts == {"GET /me 200": 1, "POST /messages 200": 1}
    fake_max.clear()
    assert fake_max.calls == [] and fake_max.counts == {}


def test_only_recent_calls_are_kept_but_counts_cover_all() -> None:
    with FakeMax(tokens={FAKE_TOKEN}, max_calls=3) as fake, httpx.Client(base_url=fake.url, headers=AUTH) as client:
        for chat in range(5):
            client.post("/messages", params={"chat_id": chat}, json=body("x"))
        assert [c["query"]["chat_id"] for c in fake.calls] == ["2", "3", "4"]
        assert client.get(fake.url + "/_fake/counts").json() == {"counts": {"POST /messages 200": 5}}


def test_control_routes_drive_a_standalone_fake(fake_max: FakeMax) -> None:
    with httpx.Client(base_url=fake_max.url) as control, httpx.Client(base_url=fake_max.url, headers=AUTH) as bot:
        pushed = control.post("/_fake/updates", json={"update": {"update_type": "bot_started", "payload": "x"}})
        assert pushed.json()["ok"] is True
        assert bot.get("/updates", params={"timeout": 0}).json()["updates"][0]["payload"] == "x"
        control.post("/_fake/fail", json={"n": 1, "status": 500})
        assert bot.get("/me").status_code == 500
        bot.post("/messages", params={"chat_id": 9}, json=body("hello"))
        assert control.get("/_fake/messages", params={"chat_id": 9}).json() == {"messages": [body("hello")]}
        calls = control.get("/_fake/calls").json()["calls"]
        assert [c["path"] for c in calls] == ["/updates", "/me", "/messages"], "control calls are not recorded"
        assert control.post("/_fake/fail", json={"n": "many"}).status_code == 400
        control.post("/_fake/reset")
        assert control.get("/_fake/calls").json() == {"calls": []}


def test_runs_on_its_own_and_prints_its_url() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "server.channels.max.fake", "--port", "0", "--token", "t0k3n"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = line.split()[4]
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(url + "/me", headers={"Authorization": "t0k3n"}).status_code == 200
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_restarted_fake_still_wakes_long_polls() -> None:
    fake = FakeMax(tokens={FAKE_TOKEN})
    for _ in range(2):
        with fake:
            threading.Timer(0.2, fake.push_update, [{"update_type": "bot_started"}]).start()
            got = httpx.get(fake.url + "/updates", params={"timeout": 5}, headers=AUTH, timeout=10).json()
            assert len(got["updates"]) == 1
            httpx.get(fake.url + "/updates", params={"timeout": 0, "marker": got["marker"]}, headers=AUTH)


def test_stopping_answers_pending_long_polls() -> None:
    answers: list[int] = []
    with FakeMax(tokens={FAKE_TOKEN}) as fake:
        poller = threading.Thread(target=lambda: answers.append(
            httpx.get(fake.url + "/updates", params={"timeout": 60}, headers=AUTH, timeout=90).status_code))
        poller.start()
        while not fake.calls:
            time.sleep(0.01)
    poller.join(10)
    assert answers == [200], "the poll was answered (empty) instead of being cut off or held for 60 s"
