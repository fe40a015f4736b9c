"""Timelines (`ports.Timelines`), run on every store kind: records, retention, and how Redis moves them on."""
from __future__ import annotations

import asyncio
import json

import pytest

from flows.dialog import Reply, Dialog, StepResult, Update
from server.db.engine import make_engine
from server.runtime import timeline
from server.runtime.stores import DialogStore, TurnCommit, new_token
from server.runtime.stores.redis import RedisStore
from tests.integration.stores.suite import begin_waiting, dialog, fill, save


async def test_timeline_records_come_back_oldest_first(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    for n in range(3):
        await save(store, bot, "4", TurnCommit(dialog("s"), timeline={"t": now + n, "n": n, "e": [["message", "s", None, str(n)]]}))
    assert [r["n"] for r in await store.timeline(bot, "4")] == [0, 1, 2]
    await store.move_timeline()  # Redis: the records go on to the database; nothing changes for a reader
    await save(store, bot, "4", TurnCommit(dialog("s"), timeline={"t": now + 3, "n": 3, "e": []}))
    assert [r["n"] for r in await store.timeline(bot, "4")] == [0, 1, 2, 3]
    await store.move_timeline()
    assert await store.move_timeline() == 0
    assert [r["n"] for r in await store.timeline(bot, "4")] == [0, 1, 2, 3]
    assert await store.timeline(bot, "nobody") == []


async def test_a_turn_saved_as_a_brief_reads_back_as_its_whole_record(store: DialogStore, bot: str) -> None:
    """What a webhook turn saves (the record without its snapshot) reads as the record `timeline.record`
    makes, in every store, before and after the Redis store moves it on; an ending turn has no snapshot."""
    now = store.test_clock.now  # type: ignore[attr-defined]
    after = {**dialog("ask_phone", name="Анна «А»"), "history": ["ask_name"], "chat_id": 7, "due": now + 60}
    asked = StepResult(None, replies=[Reply("Телефон?"), Reply("Или /cancel")], transition="got_name",
                       reason='Input "Анна" is a valid text.', outcome="transition")
    ended = StepResult(None, replies=[Reply("Готово")], transition="done", reason="fired", outcome="completed",
                       completed=Dialog("f", 1, "done", {"name": "Анна", "n": 2}))
    turns = [(now, Update.message("Анна «А»"), "ask_name", asked, after),
             (now + 1, Update(kind="tick"), "ask_phone", StepResult(None, reason="no timer", outcome="ignored"), after),
             (now + 2, Update.button("yes"), "ask_phone", ended, None)]
    expected = []
    for at, update, before, result, saved in turns:
        expected.append(timeline.record(at, update, before, result, saved))
        await save(store, bot, "5", TurnCommit(saved, timeline=timeline.brief(at, update, before, result, saved)))
    assert expected[1]["e"][0][0] == "timer" and expected[2]["s"] is None
    assert expected[2]["e"][-1] == ["completed", "done", None, '{"name": "Анна", "n": 2}']
    assert await store.timeline(bot, "5") == expected
    await store.move_timeline()
    assert await store.timeline(bot, "5") == expected


async def bot_lines(store: DialogStore, bot: str) -> dict[str, list[str]]:
    return {user: [rec["e"][0][3] for rec in records] async for user, records in store.bot_timelines(bot)}


async def test_bot_timelines_hold_every_user_ended_dialogs_included_before_and_after_a_move(
        store: DialogStore, bot: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from server.runtime.stores import redis_timeline

    monkeypatch.setattr(redis_timeline, "STREAM_READ", 2)  # the stream is read in chunks: several here
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "40", TurnCommit(dialog("s"), timeline={"t": now, "e": [["message", None, None, "hi"]]}))
    await save(store, bot, "41", TurnCommit(None, timeline={"t": now, "e": [["message", None, None, "bye"]]}))  # ended
    await save(store, bot + "x", "42", TurnCommit(dialog("s"), timeline={"t": now, "e": [["message", None, None, "x"]]}))
    for n in range(5):
        await save(store, bot, "40", TurnCommit(dialog("s"), timeline={"t": now + n, "e": [["message", "s", None, f"m{n}"]]}))
    expected = {"40": ["hi", "m0", "m1", "m2", "m3", "m4"], "41": ["bye"]}
    assert await bot_lines(store, bot) == expected
    assert (await store.timeline(bot, "40"))[-1]["e"][0][3] == "m4"
    await store.move_timeline(3)  # some moved, some still in the stream
    assert await bot_lines(store, bot) == expected
    while await store.move_timeline():
        pass
    assert await bot_lines(store, bot) == expected
    assert await bot_lines(store, bot + "x") == {"42": ["x"]}


async def test_moved_timeline_records_keep_each_users_newest_and_are_stored_once(sqlite_url: str) -> None:  # noqa: F811
    from server.runtime.stores import timeline_rows
    from server.runtime.stores.base import TIMELINE_CAP

    engine = make_engine(sqlite_url)
    try:
        rows = [("b", "1", float(n), f'{{"n":{n}}}', f"0-{n}") for n in range(TIMELINE_CAP + 5)]
        async with engine.begin() as conn:
            await timeline_rows.append(conn, rows[:10])
            await timeline_rows.append(conn, rows)  # the first ten again: a repeated move
            await timeline_rows.append(conn, [("b", "2", 0.0, "{}", "1-0")])
        async with engine.connect() as conn:
            kept = [stream_id for stream_id, _ in await timeline_rows.read(conn, "b", "1")]
            other = await timeline_rows.read(conn, "b", "2")
    finally:
        await engine.dispose()
    assert kept == [f"0-{n}" for n in range(5, TIMELINE_CAP + 5)]
    assert other == [("1-0", "{}")]


async def test_redis_moves_cap_each_users_records_every_little_while(store: DialogStore, bot: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting a user's rows costs as much as inserting them: moves cap the users they grew now and then."""
    from server.runtime.keys import member
    from server.runtime.stores import redis_timeline, timeline_rows
    from server.runtime.stores.base import TIMELINE_CAP

    if not isinstance(store, RedisStore):
        pytest.skip("only Redis stages timelines on their way to the database")

    async def add(n: int) -> None:
        for i in range(n):
            await store.client.call("XADD", store.keys.of(bot).timeline, "*", "m", member(bot, "5"), "r", f'{{"n":{i}}}')

    async def rows() -> int:
        async with store.timeline_db.connect() as conn:  # type: ignore[union-attr]
            return len(await timeline_rows.read(conn, bot, "5"))

    await add(TIMELINE_CAP + 5)
    await store.move_timeline(limit=1000)  # the first move of a process caps at once (one move: all of them)
    assert await rows() == TIMELINE_CAP
    await add(10)
    await store.move_timeline()  # within CAP_EVERY: inserted, not counted
    assert await rows() == TIMELINE_CAP + 10
    assert len(await store.timeline(bot, "5")) == TIMELINE_CAP  # a reader sees the newest TIMELINE_CAP alike
    monkeypatch.setattr(redis_timeline, "CAP_EVERY", 0.0)
    await add(1)
    await store.move_timeline()  # the users grown since the last cap are capped together
    assert await rows() == TIMELINE_CAP


async def test_redis_moves_take_a_bounded_batch_and_the_next_move_the_rest(store: DialogStore, bot: str) -> None:
    """A move takes at most MOVE_BATCH records (a large one stalls every webhook in flight); none is lost."""
    from server.runtime.keys import member
    from server.runtime.stores.base import MOVE_BATCH

    if not isinstance(store, RedisStore):
        pytest.skip("only Redis stages timelines on their way to the database")
    for i in range(MOVE_BATCH + 3):
        await store.client.call("XADD", store.keys.of(bot).timeline, "*", "m", member(bot, str(i % 7)), "r", f'{{"n":{i}}}')
    assert await store.move_timeline() == MOVE_BATCH
    assert await store.move_timeline() == 3
    assert await store.move_timeline() == 0
    assert sum([len(await store.timeline(bot, str(u))) for u in range(7)]) == MOVE_BATCH + 3


async def test_redis_moves_trim_only_what_they_read(store: DialogStore, bot: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A move trims the stream up to its last record read; records written meanwhile stay for the next."""
    from server.runtime.keys import member
    from server.runtime.stores import timeline_rows

    if not isinstance(store, RedisStore):
        pytest.skip("only Redis stages timelines on their way to the database")

    async def add(n: int) -> None:
        await store.client.call("XADD", store.keys.of(bot).timeline, "*", "m", member(bot, "7"), "r", f'{{"n":{n}}}')

    for n in range(5):
        await add(n)
    insert = timeline_rows.insert

    async def insert_while_a_turn_writes(conn, rows):  # type: ignore[no-untyped-def]
        await add(99)  # a turn commits while the move is under way
        await insert(conn, rows)

    monkeypatch.setattr(timeline_rows, "insert", insert_while_a_turn_writes)
    assert await store.move_timeline(limit=3) == 3
    assert await store.move_timeline(limit=3) == 3  # the other two, and the record written meanwhile
    monkeypatch.setattr(timeline_rows, "insert", insert)
    assert await store.move_timeline() == 1  # the one written during the second move
    assert await store.move_timeline() == 0
    async with store.timeline_db.connect() as conn:  # type: ignore[union-attr]
        moved = [json.loads(record)["n"] for _, record in await timeline_rows.read(conn, bot, "7")]
    assert moved == [0, 1, 2, 3, 4, 99, 99]


async def test_a_brief_moved_by_an_earlier_release_reads_as_a_record_without_snapshot(store: DialogStore,
                                                                                      bot: str) -> None:
    """During an upgrade, a replica that knows no briefs moves them to the database as they are."""
    from server.runtime.stores import timeline_rows

    if not isinstance(store, RedisStore):
        pytest.skip("only Redis stages timelines on their way to the database")
    now = store.test_clock.now  # type: ignore[attr-defined]
    result = StepResult(None, replies=[Reply("Телефон?")], transition="got_name", reason="fired", outcome="transition")
    entry = timeline.brief(now, Update.message("Анна"), "ask_name", result, dialog("ask_phone"))
    async with store.timeline_db.begin() as conn:  # type: ignore[union-attr]
        await timeline_rows.append(conn, [(bot, "6", now, json.dumps(entry, ensure_ascii=False), "1-0")])
    assert await store.timeline(bot, "6") == [{**timeline.record(now, Update.message("Анна"), "ask_name", result,
                                                                 dialog("ask_phone")), "s": None}]


async def _written_at(store: DialogStore) -> float:
    """The time the store stamps on the next timeline record (Redis: its own clock, in the stream id)."""
    if isinstance(store, RedisStore):
        seconds, micros = await store.client.call("TIME")
        return int(seconds) + int(micros) / 1e6
    return store.test_clock.now  # type: ignore[attr-defined]


async def _later(store: DialogStore, after: float) -> None:
    """Let the store's clock pass `after` by a few milliseconds."""
    store.test_clock.now = max(store.test_clock.now, after) + 10  # type: ignore[attr-defined]
    while isinstance(store, RedisStore) and await _written_at(store) < after + 0.003:
        await asyncio.sleep(0.002)


async def test_retention_deletes_each_bots_old_records_only(store: DialogStore, bot: str) -> None:
    from tests.integration.privacy_support import leftovers

    other = bot + "o"
    record = {"t": store.test_clock.now, "e": [["message", None, None, "old"]], "s": None}  # type: ignore[attr-defined]
    await save(store, bot, "1", TurnCommit(None, timeline=record))
    await save(store, other, "1", TurnCommit(None, timeline=record))
    await store.move_timeline()
    await save(store, bot, "2", TurnCommit(None, timeline=record))  # on Redis: still in the stream
    cut = await _written_at(store) + 0.001
    await _later(store, cut)
    fresh = {"t": store.test_clock.now, "e": [["message", None, None, "new"]], "s": None}  # type: ignore[attr-defined]
    await save(store, bot, "1", TurnCommit(None, timeline=fresh))
    # The bot keeps records from `cut` on; the other bot is listed with a cutoff that keeps everything.
    assert await store.forget_timelines({bot: cut, other: 0.0}, 0.0) == 2
    assert [r["e"][0][3] for r in await store.timeline(bot, "1")] == ["new"]
    assert await store.timeline(bot, "2") == []
    assert [r["e"][0][3] for r in await store.timeline(other, "1")] == ["old"]
    assert await store.forget_timelines({bot: cut, other: 0.0}, 0.0) == 0, "a second pass finds nothing"
    # A bot not listed falls under the default cutoff (on the shared PostgreSQL, earlier tests' bots too).
    assert await store.forget_timelines({bot: 0.0}, await _written_at(store) + 60) >= 1
    assert await store.timeline(other, "1") == [] and await leftovers(store, other, "1") == []
    assert len(await store.timeline(bot, "1")) == 1


async def test_redis_erasure_waits_for_a_timeline_move_in_progress(store: DialogStore, bot: str) -> None:
    """A move holds records it read; erasing meanwhile would let it write them back to the database."""
    from tests.integration.privacy_support import leftovers

    if not isinstance(store, RedisStore):
        pytest.skip("only Redis stages timelines on their way to the database")
    await fill(store, bot, "9", 2)
    await store.client.call("SET", store.keys.of(bot).mover, "a-move", "PX", 5000)  # a replica is moving now
    token = new_token()
    loaded = await begin_waiting(store, bot, "9", token)
    erasing = asyncio.create_task(store.erase(bot, "9", token, loaded))
    done, _ = await asyncio.wait({erasing}, timeout=0.3)
    assert not done, "erasure must wait until the move is over"
    await store.client.call("DEL", store.keys.of(bot).mover)
    assert (await asyncio.wait_for(erasing, 5))["timeline"] == 2
    assert await leftovers(store, bot, "9") == []
    assert await store.client.call("GET", store.keys.of(bot).mover) is None, "erasure gives the lease back"
