"""An experiment's arm dealing, its two counter fields per dialog, and its statistics."""
from __future__ import annotations

from collections import Counter

from flows.dialog import Dialog, StepResult
from server.runtime.arms import TAG, Arms, field
from server.runtime.funnel_counts import Counts, group
from server.services import experiment_stats

ARMS = Arms.of(7, "shop", [{"version": 1, "weight": 2}, {"version": 3, "weight": 1}, {"version": 4, "weight": 1}],
               "paid")
NOW = 1_790_000_000.0


def session(version: int, state: str) -> Dialog:
    return Dialog("shop", version, state, started_at=NOW, updated_at=NOW, entered_at=NOW)


def turn(stored: dict | None, live: Dialog | None, result: StepResult) -> tuple[list[tuple[str, str]], dict | None]:
    counts = Counts([])
    after = result.dialog.to_dict() if result.dialog is not None else None
    ARMS.count(stored, live, result, after, counts, NOW)
    return counts.pairs, after


def test_shares_follow_integer_weights_and_each_user_keeps_an_arm() -> None:
    dealt = [ARMS.version_for("bot", str(u)) for u in range(20_000)]
    shares = Counter(dealt)
    for version, share in ((1, 0.5), (3, 0.25), (4, 0.25)):
        assert abs(shares[version] / len(dealt) - share) < 0.02
    assert dealt == [ARMS.version_for("bot", str(u)) for u in range(20_000)]


def test_an_opening_is_counted_and_tagged_and_the_goal_once() -> None:
    opened = StepResult(session(3, "ask"), outcome="opened")
    pairs, after = turn(None, None, opened)
    assert pairs == [(group("shop", 3, NOW), field(7, "o"))] and after is not None and after[TAG] == 7
    # a turn on the way carries the tag on
    on_the_way = StepResult(session(3, "cart"), transition="add", outcome="transition")
    pairs, after = turn(after, session(3, "ask"), on_the_way)
    assert pairs == [] and after is not None and after[TAG] == 7
    # reaching the goal (a state the dialog stays in) counts once, then the tag is gone
    reached = StepResult(session(3, "paid"), transition="pay", outcome="transition")
    pairs, after = turn(after, session(3, "cart"), reached)
    assert pairs == [(group("shop", 3, NOW), field(7, "g"))] and after is not None and TAG not in after
    again = StepResult(session(3, "paid"), transition="back_to_paid", outcome="transition")
    assert turn(after, session(3, "cart"), again)[0] == []


def test_a_final_goal_and_dialogs_outside_the_experiment() -> None:
    tagged = {**session(1, "cart").to_dict(), TAG: 7}
    done = StepResult(None, transition="pay", outcome="transition", completed=session(1, "paid"))
    assert turn(tagged, session(1, "cart"), done)[0] == [(group("shop", 1, NOW), field(7, "g"))]
    # started before the experiment (untagged), or in an earlier one: its goal is not this experiment's
    for stored in (session(1, "cart").to_dict(), {**session(1, "cart").to_dict(), TAG: 6}):
        assert turn(stored, session(1, "cart"), done)[0] == []
    # opened on a version that is no arm (the bot's publication while the catalog was stale): not counted
    pairs, after = turn(None, None, StepResult(session(2, "ask"), outcome="opened"))
    assert pairs == [] and after is not None and TAG not in after


def test_statistics_name_the_better_arm_and_are_the_same_every_time() -> None:
    arms = experiment_stats.summary([(200, 20), (200, 40)])
    assert arms == experiment_stats.summary([(200, 20), (200, 40)])
    assert arms[1]["probability_best"] > 0.99 and abs(sum(a["probability_best"] for a in arms) - 1) < 1e-9
    low, high = arms[0]["interval"]
    assert low < 0.1 < high and 0.05 < low and high < 0.16
    assert experiment_stats.winner(arms, 0.95, 200) == 1
    assert experiment_stats.winner(arms, 0.95, 201) is None  # not enough dialogs yet
    even = experiment_stats.summary([(100, 10), (100, 10)])
    assert experiment_stats.winner(even, 0.95, 1) is None
    assert experiment_stats.summary([(0, 0), (0, 0)])[0]["conversion"] is None


def test_an_interval_holds_the_observed_rate_even_at_zero_and_at_all() -> None:
    none, every = experiment_stats.summary([(30, 0), (30, 30)])
    assert none["interval"][0] == 0.0 < none["interval"][1] < 0.12  # one-sided: 0% was seen, it stays in
    assert 0.88 < every["interval"][0] < every["interval"][1] == 1.0
