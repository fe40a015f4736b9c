"""The listing (`ports.Listing`): running dialogs counted and paged through; run on every store kind."""
from __future__ import annotations


import pytest

from server.runtime.stores import DialogStore, TurnCommit
from server.runtime.stores.listing import CURSOR_MAX, BadSearch, Search
from tests.integration.stores.suite import all_pages, dialog, save


async def test_running_dialogs_are_counted_per_flow_version_and_state(store: DialogStore, bot: str) -> None:
    await save(store, bot, "20", TurnCommit(dialog("ask")))
    await save(store, bot, "21", TurnCommit(dialog("ask")))
    await save(store, bot, "22", TurnCommit({**dialog("done"), "version": 2}))
    await save(store, bot, "23", TurnCommit({**dialog("ask"), "flow": "g"}))
    await save(store, bot, "24", TurnCommit(dialog("ask")))
    await save(store, bot, "24", TurnCommit(None))  # ended: not running
    await save(store, bot + "x", "20", TurnCommit(dialog("ask")))  # another bot
    assert await store.dialog_counts(bot) == {("f", 1, "ask"): 2, ("f", 2, "done"): 1, ("g", 1, "ask"): 1}
    assert await store.dialog_counts(bot + "y") == {}


async def test_running_dialogs_are_listed_a_page_at_a_time_and_searched_by_user(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    users = ["100", "101", "1020", "103", "200", "201", "3_0"]
    for n, user in enumerate(users):
        session = {**dialog("ask" if n % 2 else "done"), "updated_at": now - n}
        await save(store, bot, user, TurnCommit(session))
    await save(store, bot + "x", "100", TurnCommit(dialog("ask")))
    everyone = (await all_pages(store, bot, Search(limit=2)))[0]
    assert sorted(everyone) == sorted(users) and len(everyone) == len(users)
    assert sorted((await all_pages(store, bot, Search(user="10", limit=2)))[0]) == ["100", "101", "1020", "103"]
    assert (await all_pages(store, bot, Search(user="3_", limit=5)))[0] == ["3_0"]
    assert (await all_pages(store, bot, Search(user="3%", limit=5)))[0] == []  # wildcards are literal
    assert (await all_pages(store, bot, Search(user="10", exact=True)))[0] == []
    exact = await store.dialog_page(bot, Search(user="101", exact=True))
    assert [(d.user, d.flow, d.version, d.state, d.updated) for d in exact.dialogs] == [("101", "f", 1, "ask", now - 1)]
    assert exact.next is None
    assert sorted((await all_pages(store, bot, Search(state="ask", limit=1)))[0]) == ["101", "103", "201"]
    assert (await all_pages(store, bot, Search(version=2)))[0] == []
    assert sorted((await all_pages(store, bot, Search(user="2", state="done", version=1)))[0]) == ["200"]
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]
        with pytest.raises(BadSearch):
            await store.dialog_page(bot, Search(cursor="not-a-cursor"))
    with pytest.raises(BadSearch):
        await store.dialog_page(bot, Search(limit=0))
    for cursor in ("1" * (CURSOR_MAX + 1), "10\x00"):  # longer than any handed out, or not text
        with pytest.raises(BadSearch):
            await store.dialog_page(bot, Search(cursor=cursor))
