"""An action URL whose host is no internet name: refused at load, and abandoned (never retried) if one slips by."""
from __future__ import annotations

import logging

import pytest

from flows.errors import FlowFormatError
from flows.load import load
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, running
from tests.integration.runtime_support import sqlite_url  # noqa: F401
from tests.integration.test_runtime_events import BOT, payment_flow

FULLWIDTH = "http://①②⑦.0.0.1/hook"


@pytest.mark.parametrize("url", [FULLWIDTH, "http://ａｂｃ.example/hook"])
def test_a_host_that_is_no_internet_name_is_refused_at_load_with_its_path(url):
    with pytest.raises(FlowFormatError) as caught:
        load(payment_flow(url))
    assert caught.value.details[0]["path"] == "transitions[1].actions[0].url"
    assert "IDNA" in caught.value.details[0]["message"]


async def test_an_action_that_cannot_be_attempted_is_abandoned_with_a_reason(
        sqlite_url: str, fake_max: FakeMax, monkeypatch, caplog) -> None:  # noqa: F811
    from server import metrics

    refused = metrics.ACTIONS.labels(result="refused")
    before = refused._value.get()
    # A version frozen before the loader knew this rule: it reaches the sender as it is.
    monkeypatch.setattr("flows.load.webhook_problems", lambda raw, allow: [])
    caplog.set_level(logging.WARNING, logger="botflow")
    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        await h.publish(BOT, payment_flow(FULLWIDTH))
        await h.deliver(BOT, msg(9200, "hi"))
        await h.deliver(BOT, msg(9200, "Иван"))
        taken = await h.api("POST", f"/api/bots/{BOT}/users/9200/events", json={"name": "paid", "payload": {"amount": 150}})
        assert taken.status_code == 200
        await fake_max.wait_for(lambda _: refused._value.get() > before, timeout=10)
    abandoned = [r.getMessage() for r in caplog.records if "abandoned after 1 attempts" in r.getMessage()]
    assert abandoned and "cannot be sent" in abandoned[0], [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
