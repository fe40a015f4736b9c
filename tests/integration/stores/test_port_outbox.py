"""The outbox (`ports.Outbox`): per-user queues in order, claims, acks, retries; run on every store kind."""
from __future__ import annotations

import time


from server.runtime.bot_counts import bot_counts
from server.runtime.stores import DialogStore, TurnCommit, new_token
from server.runtime.stores.base import Ack
from tests.integration.stores.suite import begin_waiting, dialog, save


async def test_outbox_keeps_order_and_retries_the_head(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    items = [{"id": f"i{n}", "op": "send", "text": str(n)} for n in range(3)]
    first, second = new_token(), new_token()
    loaded = await begin_waiting(store, bot, "7", first)
    claimed = await store.commit(bot, "7", first, TurnCommit(dialog("s"), outbox=items[:2], outbox_lease=5), loaded)
    assert claimed is not None and claimed.item == items[0]
    loaded = await begin_waiting(store, bot, "7", second)
    # The first turn's sender still works on the queue: the second turn's replies wait behind it.
    assert await store.commit(bot, "7", second, TurnCommit(dialog("s"), outbox=items[2:], outbox_lease=5), loaded) is None
    mine = lambda claimed: [(c.user, c.taken_over) for c in claimed if c.bot == bot]  # noqa: E731
    assert mine(await store.outbox_claim(now, 30, "poller")) == []  # claimed by the first committer
    head = await store.outbox_head(bot, "7")
    assert head == items[0]
    head["attempts"] = 1
    await store.outbox_later(bot, "7", head, now + 5, "someone-else")  # not the claimer: ignored
    assert mine(await store.outbox_claim(now + 4, 30, "poller")) == []
    await store.outbox_later(bot, "7", head, now + 5, first)  # ends the claim, retried at now + 5
    assert mine(await store.outbox_claim(now + 4.99, 30, "poller")) == []  # never early
    # at most a second late: the Redis queue keeps whole seconds (see stores.redis_outbox.retry_at)
    assert mine(await store.outbox_claim(now + 6, 30, "poller")) == [("7", False)]
    assert (await store.outbox_head(bot, "7"))["attempts"] == 1
    assert await store.outbox_done(bot, "7", "i0", first) is None  # the claim moved on to the poller
    assert (await store.outbox_done(bot, "7", "i0", "poller")).item["id"] == "i1"
    assert (await store.outbox_done(bot, "7", "i0", "poller")).item["id"] == "i1"  # a repeated ack drops no more
    assert [(await store.outbox_head(bot, "7"))["id"]] == ["i1"]
    assert (await store.outbox_done(bot, "7", "i1", "poller")).item == items[2]
    assert await store.outbox_done(bot, "7", "i2", "poller") is None
    assert await store.outbox_head(bot, "7") is None
    assert mine(await store.outbox_claim(now + 10_000, 30, "poller")) == []
    loaded = await begin_waiting(store, bot, "7", third := new_token())
    assert await store.commit(bot, "7", third, TurnCommit(dialog("s"), outbox=items[:1]), loaded) is not None


async def test_a_lapsed_outbox_claim_is_taken_over_and_renewals_keep_it(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    token = new_token()
    loaded = await begin_waiting(store, bot, "10", token)
    item = {"id": "r1", "op": "send", "text": "hi"}
    assert await store.commit(bot, "10", token, TurnCommit(dialog("s"), outbox=[item], outbox_lease=5), loaded) is not None
    mine = lambda claimed: [(c.user, c.taken_over) for c in claimed if c.bot == bot]  # noqa: E731
    if store.kind not in ("redis", "redis-py"):  # type: ignore[attr-defined]  (Redis leases run on its own clock)
        store.test_clock.now = now + 4  # type: ignore[attr-defined]
    assert await store.outbox_hold([(bot, "10")], token, now + 9) == [(bot, "10")]
    assert await store.outbox_hold([(bot, "10")], "not-the-owner", now + 9) == []
    assert mine(await store.outbox_claim(now + 8, 30, "other")) == []  # renewed until now + 9
    # A replica just back from a store it could not reach takes over no lapsed claim, only retries.
    assert mine(await store.outbox_claim(now + 9, 30, "other", take_over=False)) == []
    # The committer died: once its claim lapses another sender takes the queue, told it was taken over.
    assert mine(await store.outbox_claim(now + 9, 30, "other")) == [("10", True)]
    # The former claimer hears nothing more, but its late word that r1 went out drops it: the new one does
    # not send it again.
    assert await store.outbox_done(bot, "10", "r1", token) is None
    assert await store.outbox_head(bot, "10") is None
    assert await store.outbox_done(bot, "10", "r1", "other") is None
    assert mine(await store.outbox_claim(now + 10_000, 30, "poller")) == []  # the claim ended with its queue


async def test_an_ack_proves_and_renews_the_claim_for_the_next_send(store: DialogStore, bot: str) -> None:
    """The round trip that marks a send done is the fence for the next one: only the claim's owner hears
    what comes next, with its claim renewed (`Next.held`, on this process's monotonic clock)."""
    now = store.test_clock.now  # type: ignore[attr-defined]
    items = [{"id": f"f{n}", "op": "send", "text": str(n)} for n in range(3)]
    token = new_token()
    loaded = await begin_waiting(store, bot, "11", token)
    before = time.monotonic()
    first = await store.commit(bot, "11", token, TurnCommit(dialog("s"), outbox=items, outbox_lease=5), loaded)
    assert first is not None and before + 3 < first.held < time.monotonic() + 5
    mine = lambda claimed: [(c.user, c.taken_over) for c in claimed if c.bot == bot]  # noqa: E731
    store.test_clock.now = now + 4  # type: ignore[attr-defined]
    following = await store.outbox_done(bot, "11", "f0", token, lease=5)
    assert following is not None and following.item == items[1] and following.held > time.monotonic() + 2
    assert mine(await store.outbox_claim(now + 7.5, 30, "other")) == []  # renewed by the ack to now + 9
    assert await store.outbox_done(bot, "11", "f1", "not-the-owner", lease=5) is None  # a stranger hears nothing
    assert (await store.outbox_head(bot, "11")) == items[2]  # ... yet what it says went out leaves the queue
    (_, _, going), = await store.outbox_acks([Ack(bot, "11", token, ("f1",))], lease=5)
    assert going.item == items[2] and going.held > time.monotonic() + 2
    assert mine(await store.outbox_claim(now + 10.5, 30, "other")) == [("11", True)]
    assert await store.outbox_acks([Ack(bot, "11", token, ("f2",))]) == []  # overtaken: nothing more for it
    assert await store.outbox_head(bot, "11") is None


async def test_acks_of_many_users_in_one_call_each_get_their_own_answer(store: DialogStore, bot: str) -> None:
    """One call for a pass's acks (PostgreSQL: one statement): a queue that goes on hands its owner the next
    send, an emptied one ends its claim, a stranger's word drops the head and hears nothing."""
    now = store.test_clock.now  # type: ignore[attr-defined]
    tokens = {}
    for user, count in (("21", 2), ("22", 1), ("23", 2)):
        items = [{"id": f"{user}-{n}", "op": "send", "text": str(n)} for n in range(count)]
        loaded = await begin_waiting(store, bot, user, token := new_token())
        assert await store.commit(bot, user, token, TurnCommit(dialog("s"), outbox=items, outbox_lease=5), loaded)
        tokens[user] = token
    answers = await store.outbox_acks([Ack(bot, "21", tokens["21"], ("21-0",)), Ack(bot, "22", tokens["22"], ("22-0",)),
                                       Ack(bot, "23", "a-stranger", ("23-0",))], lease=5)
    assert [(user, going.item["id"]) for b, user, going in answers if b == bot] == [("21", "21-1")]
    assert await store.outbox_head(bot, "22") is None
    assert await store.outbox_head(bot, "23") == {"id": "23-1", "op": "send", "text": "1"}
    mine = lambda claimed: sorted(c.user for c in claimed if c.bot == bot)  # noqa: E731
    assert mine(await store.outbox_claim(now + 2, 30, "other")) == [], "21 renewed, 22 ended, 23 still its owner's"
    assert mine(await store.outbox_claim(now + 30, 30, "other")) == ["21", "23"]


async def test_queued_sends_of_an_ended_dialog_still_list_their_user(store: DialogStore, bot: str) -> None:
    items = [{"id": "bye", "op": "send", "text": "Спасибо!"}]
    await save(store, bot, "3", TurnCommit(dialog("ask")))
    loaded = await begin_waiting(store, bot, "4", token := new_token())
    await store.commit(bot, "4", token, TurnCommit(None, outbox=items, outbox_lease=5), loaded)  # the final reply
    assert [u async for u in store.users(bot)] == ["3"]
    assert [u async for u in store.outbox_users(bot)] == ["4"]
    assert await store.outbox_done(bot, "4", "bye", token) is None
    assert [u async for u in store.outbox_users(bot)] == []


async def test_the_bot_page_counts_replies_waiting_after_their_dialog_ended(store: DialogStore, bot: str) -> None:
    await save(store, bot, "1", TurnCommit(dict(dialog("ask"), version=2)))
    loaded = await begin_waiting(store, bot, "2", token := new_token())
    await store.commit(bot, "2", token, TurnCommit(None, outbox=[{"id": "bye", "op": "send", "text": "Пока"}]), loaded)
    counts = await bot_counts(store, bot)
    assert (dict(counts.dialogs), counts.waiting, counts.complete) == ({"2": 1}, 1, True)
    assert (await bot_counts(store, bot, cap=0)).complete is False
