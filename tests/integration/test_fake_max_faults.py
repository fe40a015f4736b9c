"""The fake MAX's trouble on demand: Retry-After, slow calls, outages, cut connections, callers hanging up."""
from __future__ import annotations

import time

import httpx
import pytest

from server.channels.transport import LeanClient, OutcomeUnknown
from tests.fakemax import FAKE_TOKEN, FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)

AUTH = {"Authorization": FAKE_TOKEN}
MESSAGE = {"text": "hi", "attachments": [], "link": None}


@pytest.fixture
def http(fake_max: FakeMax):  # noqa: F811
    with httpx.Client(base_url=fake_max.url, headers=AUTH, timeout=10) as client:
        yield client


def send(http: httpx.Client, chat: int = 1) -> httpx.Response:
    return http.post("/messages", params={"chat_id": chat}, json=MESSAGE)


def test_a_429_carries_the_retry_after_it_was_given(http: httpx.Client, fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.fail_next(1, 429, "/messages", retry_after=7)
    refused = send(http)
    assert refused.status_code == 429 and refused.headers["retry-after"] == "7"
    assert refused.json()["code"] == "too.many.requests"
    assert send(http).status_code == 200 and "retry-after" not in send(http).headers
    with pytest.raises(ValueError):
        fake_max.fail_next(1, 200)


def test_a_rate_limit_refuses_the_calls_beyond_it_per_bot(http: httpx.Client, fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.set_rate_limit(5, retry_after=2)
    statuses = [send(http).status_code for _ in range(8)]
    assert statuses == [200] * 5 + [429] * 3
    assert send(http).headers["retry-after"] == "2"
    with httpx.Client(base_url=fake_max.url, headers={"Authorization": "other"}, timeout=5) as other:
        assert other.get("/me").status_code == 401  # another token has its own budget (and is unknown here)
    time.sleep(1.05)
    assert send(http).status_code == 200
    fake_max.set_rate_limit(None)
    assert all(send(http).status_code == 200 for _ in range(10))
    assert len(fake_max.sent_messages(chat_id=1)) == 16


def test_a_slow_max_holds_every_call_until_it_is_fast_again(http: httpx.Client, fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.set_slow(0.4, "/messages")
    started = time.monotonic()
    assert send(http).status_code == 200 and http.get("/me").status_code == 200
    assert 0.35 <= time.monotonic() - started
    started = time.monotonic()
    assert send(http).status_code == 200 and time.monotonic() - started >= 0.35
    fake_max.set_slow(0, "/messages")
    fake_max.set_slow(5.0, "/elsewhere")  # a hold on another path leaves sends alone
    with httpx.Client(base_url=fake_max.url, headers=AUTH, timeout=2) as impatient:
        assert send(impatient).status_code == 200


def test_down_for_a_period_comes_back_by_itself(http: httpx.Client, fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.set_down(True, seconds=0.5)
    assert send(http).status_code == 503
    time.sleep(0.6)
    assert send(http).status_code == 200


def test_down_with_cut_connections_answers_nothing(http: httpx.Client, fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.set_down(True, drop=True)
    with pytest.raises(httpx.TransportError):
        send(http)
    fake_max.set_down(False)
    assert send(http, 2).status_code == 200
    assert len(fake_max.sent_messages()) == 1
    assert fake_max.counts["POST /messages dropped"] == 1


async def test_a_cut_after_the_call_took_effect_is_an_unknown_outcome_that_did_happen(fake_max: FakeMax) -> None:  # noqa: F811
    client = LeanClient(timeout=3)
    fake_max.drop_next(1, "/messages", when="before")
    with pytest.raises(OutcomeUnknown):
        await client.request("POST", fake_max.url + "/messages", params={"chat_id": 5},
                             content=b'{"text":"lost","attachments":[],"link":null}', headers=AUTH)
    fake_max.drop_next(1, "/messages", when="after")
    with pytest.raises(OutcomeUnknown):
        await client.request("POST", fake_max.url + "/messages", params={"chat_id": 5},
                             content=b'{"text":"delivered","attachments":[],"link":null}', headers=AUTH)
    await client.aclose()
    assert fake_max.sent_messages(chat_id=5) == [{"text": "delivered", "attachments": [], "link": None}]
    assert [c["json"]["text"] for c in fake_max.hung_up()] == ["delivered"]


async def test_a_caller_that_hangs_up_during_a_hold_is_recorded(fake_max: FakeMax) -> None:  # noqa: F811
    fake_max.set_slow(2.0, "/messages")
    client = LeanClient(timeout=0.3)
    with pytest.raises(OutcomeUnknown):
        await client.request("POST", fake_max.url + "/messages", params={"chat_id": 6},
                             content=b'{"text":"slow","attachments":[],"link":null}', headers=AUTH)
    fake_max.set_slow(0, "/messages")
    answer = await client.request("POST", fake_max.url + "/messages", params={"chat_id": 6},
                                  content=b'{"text":"quick","attachments":[],"link":null}', headers=AUTH)
    await client.aclose()
    assert answer.status_code == 200
    await fake_max.wait_for(lambda f: len(f.sent_messages(chat_id=6)) == 2, timeout=5)
    calls = [c for c in fake_max.calls if c["path"] == "/messages"]
    assert [(c["json"]["text"], c["hung_up"]) for c in calls] == [("slow", True), ("quick", False)]


def test_control_routes_set_the_new_faults(fake_max: FakeMax) -> None:  # noqa: F811
    with httpx.Client(base_url=fake_max.url) as control, httpx.Client(base_url=fake_max.url, headers=AUTH) as bot:
        control.post("/_fake/fail", json={"n": 1, "status": 429, "retry_after": 3})
        assert bot.get("/me").headers["retry-after"] == "3"
        control.post("/_fake/rate", json={"per_second": 1, "retry_after": 4})
        assert [bot.get("/me").status_code for _ in range(2)] == [200, 429]
        control.post("/_fake/rate", json={"per_second": None})
        control.post("/_fake/slow", json={"seconds": 0.3})
        started = time.monotonic()
        bot.get("/me")
        assert time.monotonic() - started >= 0.25
        control.post("/_fake/slow", json={"seconds": 0})
        control.post("/_fake/down", json={"seconds": 0.3})
        assert bot.get("/me").status_code == 503
        time.sleep(0.35)
        control.post("/_fake/drop", json={"n": 1, "path": "/me"})
        with pytest.raises(httpx.TransportError):
            bot.get("/me")
        assert control.post("/_fake/drop", json={"when": "later"}).status_code == 400
        control.post("/_fake/reset")
        assert bot.get("/me").status_code == 200
