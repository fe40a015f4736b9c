"""The fault suite's judge: what counts as lost, doubled, explained, unexpected, out of order, and the stall."""
from __future__ import annotations

import pytest

from tests.faults.play import Player, Received, Step
from tests.faults.verdict import judge


def player(*steps: list[str], sent: float = 100.0) -> Player:
    made = Player(1, [Step([], list(expected)) for expected in steps])
    for i, step in enumerate(made.steps):
        step.sent_at = sent + 10 * i
    return made


def got(*items: tuple[str, float] | tuple[str, float, bool]) -> list[Received]:
    return [Received(i[0], i[1], bool(i[2]) if len(i) > 2 else False) for i in items]  # type: ignore[misc]


def test_exactly_the_expected_replies_in_order_are_clean() -> None:
    v = judge(player(["a"], ["b", "c"]), got(("a", 100.5), ("b", 110.2), ("c", 111.0)))
    assert (v.lost, v.doubled, v.unexpected, v.out_of_order, v.users_hit) == (0, 0, 0, 0, 0)
    assert v.clean and v.expected == 3 and v.stall == 1.0


def test_a_missing_reply_is_lost_and_a_second_copy_is_doubled() -> None:
    v = judge(player(["a"], ["b"], ["c"]), got(("a", 101), ("a", 131), ("c", 121)))
    assert (v.lost, v.doubled, v.doubled_unexplained, v.users_hit) == (1, 1, 1, 1)
    assert not v.clean


def test_a_copy_whose_first_send_had_an_unknown_outcome_is_explained() -> None:
    v = judge(player(["a"], ["b"]), got(("a", 100.2, True), ("a", 100.4), ("b", 110.1)))
    assert (v.doubled, v.doubled_unexplained, v.unknown) == (1, 0, 1)
    assert v.clean and v.users_hit == 1


def test_a_send_resumed_after_its_sender_stopped_explains_one_copy_and_no_more() -> None:
    # The sender died after MAX took "a" and before it could note so; another replica sent "a" again.
    v = judge(player(["a"], ["b"]), got(("a", 100.2), ("a", 105.0), ("b", 110.1)), resumed=1)
    assert (v.doubled, v.doubled_unexplained, v.resumed) == (1, 0, 1) and v.clean
    twice = judge(player(["a"], ["b"]), got(("a", 100.2), ("a", 105.0), ("a", 106.0), ("b", 110.1)), resumed=1)
    assert (twice.doubled, twice.doubled_unexplained) == (2, 1) and not twice.clean
    unrelated = judge(player(["a"]), got(("a", 100.2), ("Не понял. Повторите, пожалуйста.", 100.3)), resumed=1)
    assert unrelated.unexpected == 1 and not unrelated.clean, "a resumed send never excuses a reply never due"


def test_replies_the_dialog_never_gives_are_unexpected() -> None:
    v = judge(player(["a"]), got(("a", 100.1), ("Не понял. Повторите, пожалуйста.", 100.2)))
    assert v.unexpected == 1 and not v.clean


def test_replies_in_the_wrong_order_are_counted_once_each() -> None:
    v = judge(player(["a"], ["b"], ["c"]), got(("b", 110.1), ("a", 110.2), ("c", 120.1)))
    assert v.out_of_order == 1 and v.lost == 0 and not v.clean
    late = judge(player(["a"], ["b"], ["c"]), got(("c", 120.1), ("a", 120.2), ("b", 120.3)))
    assert late.out_of_order == 1


def test_repeated_texts_are_matched_by_occurrence() -> None:
    fifty = player(["hi"], ["help"] * 50)
    v = judge(fifty, got(("hi", 100.1), *[("help", 110.0 + n / 100) for n in range(50)]))
    assert v.clean and v.stall < 0.5
    short = judge(fifty, got(("hi", 100.1), *[("help", 110.0 + n / 100) for n in range(49)]))
    assert short.lost == 1


def test_the_stall_is_the_longest_wait_for_a_step_s_last_reply() -> None:
    v = judge(player(["a"], ["b", "c"]), got(("a", 100.3), ("b", 111), ("c", 139.5)))
    assert v.stall == 29.5


def test_the_inbox_keeps_one_bot_s_accepted_messages_per_user_in_the_order_max_took_them() -> None:
    import httpx

    from server.channels.max.fake import FakeMax
    from tests.faults.cluster import bot_token
    from tests.faults.play import Inbox

    with FakeMax(tokens=None) as fake, httpx.Client(base_url=fake.url, timeout=5) as http:
        def send(bot: str, chat: int, text: str) -> int:
            return http.post("/messages", params={"chat_id": chat}, json={"text": text, "attachments": [], "link": None},
                             headers={"Authorization": bot_token(bot)}).status_code

        assert send("mine", 1, "one") == 200
        assert send("other", 1, "not mine") == 200
        fake.fail_next(1, 503)
        assert send("mine", 1, "refused") == 503
        assert send("mine", 2, "to someone else") == 200
        fake.drop_next(1, "/messages", when="after")
        with pytest.raises(httpx.TransportError):
            send("mine", 1, "taken, answer lost")
        inbox = Inbox(fake, "mine", {1})
        inbox.refresh()
    assert [(r.text, r.unknown) for r in inbox.by_user[1]] == [("one", False), ("taken, answer lost", True)]


def test_a_user_told_their_place_was_lost_is_judged_on_what_came_before_the_notice() -> None:
    told = "lost"
    clean = judge(player(["a"], ["b"], ["c"]), got(("a", 101), (told, 112), ("a", 112.1), ("x", 121)),
                  lost_place=told)
    assert (clean.lost, clean.doubled, clean.unexpected, clean.told) == (0, 0, 0, 1) and clean.clean
    # asked again for what they gave before anyone said the dialog was lost: a silent rewind
    silent = judge(player(["a"], ["b"], ["c"]), got(("a", 101), ("b", 111), ("b", 121), (told, 122)),
                   lost_place=told)
    assert (silent.doubled_unexplained, silent.told) == (1, 1) and not silent.clean
    # without the notice nothing is excused, and where no loss is expected the notice is itself unexpected
    untold = judge(player(["a"], ["b"]), got(("a", 101)), lost_place=told)
    assert (untold.lost, untold.told) == (1, 0) and not untold.clean
    assert judge(player(["a"]), got(("a", 101), (told, 102))).unexpected == 1
