"""The funnel by the dialog's language, through real webhooks: MAX's user_locale opens each dialog in a
language, every count lands under it, and the languages add up to the whole funnel."""
from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, serving, texts
from tests.integration.runtime_support import (  # noqa: F401 (fixtures)
    REDIS_URL, delete_prefix, migrated_database, redis_prefix, sqlite_url,
)
from tests.integration.test_funnel_counts import BOT, TTL, figures, funnel, short_flow


def bilingual_flow() -> dict[str, Any]:
    doc = short_flow()
    doc["languages"] = ["ru", "en"]
    first = doc["states"][0]["say"][0]
    first["text"] = {"ru": first["text"], "en": "Hello! What is your name?"}
    return doc


def from_app(user: int, text: str, locale: str) -> dict[str, Any]:
    update = msg(user, text)
    update["user_locale"] = locale
    return update


@pytest.mark.parametrize("backend", ["redis", "sql"])
async def test_the_funnel_is_counted_and_read_per_language(backend: str, fake_max: FakeMax, request) -> None:  # noqa: F811
    async with serving(request, backend, fake_max.url, BOT, bilingual_flow()) as h:
        version = h.version
        for user, locale in ((601, "en-US"), (602, "en"), (603, "en-GB"), (604, "ru"), (605, "de-DE")):
            await h.deliver(BOT, from_app(user, "hi", locale))
        await fake_max.wait_for(lambda f: texts(f, 601) and texts(f, 605), timeout=5)
        assert texts(fake_max, 601)[0] == "Hello! What is your name?"
        assert texts(fake_max, 605)[0] != "Hello! What is your name?"  # German is not listed: Russian
        await h.deliver(BOT, from_app(601, "Ann", "ru"))  # the dialog keeps English
        await h.deliver(BOT, from_app(604, "/cancel", "ru"))
        await asyncio.sleep(TTL + 0.5)
        await h.runtime.store.sweep(time.time())
        english = figures(await funnel(h, version, language="en"))
        russian = figures(await funnel(h, version, language="ru"))
        whole = figures(await funnel(h, version))
        refused = await h.api("GET", f"/api/bots/{BOT}/funnel", params={"version": version, "language": "de"})
    assert english == {"entered ask_name": 3, "left ask_name by name_ok": 1, "fired name_ok": 1,
                       "entered ask_phone": 1, "expired ask_name": 2, "expired ask_phone": 1}
    assert russian == {"entered ask_name": 2, "cancel ask_name": 1, "expired ask_name": 1}
    assert whole == {key: english.get(key, 0) + russian.get(key, 0) for key in {*english, *russian}}
    assert refused.status_code == 400 and "no language 'de'" in refused.json()["message"]
