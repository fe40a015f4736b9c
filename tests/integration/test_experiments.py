"""A/B experiments through real webhooks on three replicas: sticky arms, exact counts, one auto-promotion."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from server.db.models import AuditRow, PublicationRow
from server.runtime.arms import Arms
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import ROOT, msg, press, registration, replicas
from tests.integration.runtime_support import (  # noqa: F401 (fixtures)
    REDIS_URL, migrated_database, redis_prefix, sqlite_url,
)

GOAL = "confirmed"


@pytest.fixture(scope="module")
def experiment_pg_url() -> Iterator[str]:
    with migrated_database("bf_experiments") as url:
        yield url


@pytest.fixture(params=["redis", "sql"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str | None]:
    """(database, redis) for three replicas: Redis with SQLite, or the SQL store on PostgreSQL."""
    monkeypatch.setenv("BOTFLOW_EXPERIMENT_CHECK", "3600")  # the test runs the checks itself
    if request.param == "redis":
        monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", request.getfixturevalue("redis_prefix"))
        return request.getfixturevalue("sqlite_url"), REDIS_URL
    return request.getfixturevalue("experiment_pg_url"), None


def assignments(bot: str, experiment: int, users: range) -> list[int]:
    arms = Arms.of(experiment, "registration", [{"version": 1, "weight": 1}, {"version": 2, "weight": 3}], GOAL)
    return [arms.version_for(bot, str(u)) for u in users]


def test_ten_thousand_users_keep_their_arm_in_another_process_and_shares_follow_the_weights() -> None:
    users = range(1, 10_001)
    here = assignments("shop", 7, users)
    script = ("import json; from tests.integration.test_experiments import assignments; "
              "print(json.dumps(assignments('shop', 7, range(1, 10_001))))")
    # A new interpreter with its own hash seed stands for another replica and for a restart.
    there = json.loads(subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                                      check=True, env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout)
    assert here == there
    shares = Counter(here)
    assert abs(shares[1] / len(users) - 0.25) < 0.02 and abs(shares[2] / len(users) - 0.75) < 0.02
    # another experiment on the same bot deals the users afresh
    assert assignments("shop", 8, users) != here


async def together(*turns: Any) -> list[Any]:
    """Run the turns at once, at most eight in flight (a burst beyond that waits on the SQL store's pool)."""
    gate = asyncio.Semaphore(8)

    async def one(turn: Any) -> Any:
        async with gate:
            return await turn

    return await asyncio.gather(*(one(t) for t in turns))


async def complete(h: Any, bot: str, user: int) -> None:
    for text in ("Иван", "+79001234567", "ivan@example.ru"):
        assert (await h.deliver(bot, msg(user, text))).status_code == 200
    assert (await h.deliver(bot, press(user, "yes"))).status_code == 200


async def session_version(h: Any, bot: str, user: int) -> int | None:
    answer = await h.api("GET", f"/api/bots/{bot}/users/{user}/session")
    return answer.json()["version"] if answer.status_code == 200 else None


async def start(h: Any, bot: str, auto: dict[str, Any] | None = None, weights: tuple[int, int] = (1, 3)) -> dict:
    answer = await h.api("POST", f"/api/bots/{bot}/experiment", json={
        "flow": f"reg{bot}", "arms": [{"version": 1, "weight": weights[0]}, {"version": 2, "weight": weights[1]}],
        "goal": {"state": GOAL}, "auto_promote": auto})
    assert answer.status_code == 201, answer.text
    return answer.json()


async def two_versions(h: Any, bot: str) -> None:
    """The bot serving version 2 of a flow of its own (`reg<bot>`) with two versions."""
    await h.bot(bot)
    document = {**registration(), "id": f"reg{bot}"}
    assert await h.publish(bot, document) == 1
    assert await h.publish(bot, document) == 2


async def test_sticky_arms_and_exact_counts_on_three_replicas_across_a_restart(
        backend: tuple[str, str | None], fake_max: FakeMax) -> None:  # noqa: F811
    database, redis = backend
    bot = "ab" + uuid.uuid4().hex[:6]
    users = list(range(1000, 1060))
    async with replicas(3, database, fake_max.url, redis) as three:
        a = three[0]
        await two_versions(a, bot)
        early = 999  # a dialog running on version 2 before the experiment keeps it, whatever its arm
        await a.deliver(bot, msg(early, "hi"))
        experiment = await start(a, bot)
        assert experiment["status"] == "running" and experiment["arms"][0] == {"version": 1, "weight": 1}
        for r in three[1:]:
            await r.runtime.bot_changed(bot)
        expected = dict(zip(users, assignments(bot, experiment["id"], range(1000, 1060))))
        # every user's turns land on a different replica each time, all users at once
        await together(*(three[u % 3].deliver(bot, msg(u, "hi")) for u in users))
        converting = [u for u in users if u % 4 == 0]
        await together(*(complete(three[(u + 1) % 3], bot, u) for u in converting))
        for u in users:
            if u not in converting:
                assert await session_version(three[u % 3], bot, u) == expected[u]
        assert await session_version(a, bot, early) == 2
        await complete(a, bot, early)  # not counted: it did not start in the experiment
        reports = [(await r.api("GET", f"/api/bots/{bot}/experiment")).json() for r in three]
    async with replicas(3, database, fake_max.url, redis) as again:  # every replica restarted
        # the converted users' dialogs ended: their new ones start on the same arm, on any replica
        await together(*(again[u % 3].deliver(bot, msg(u, "hi")) for u in converting))
        for u in converting:
            assert await session_version(again[(u + 2) % 3], bot, u) == expected[u]
        after = (await again[1].api("GET", f"/api/bots/{bot}/experiment")).json()
    per_arm = Counter(expected.values())
    reached = Counter(expected[u] for u in converting)
    for report in reports:
        assert [(arm["version"], arm["dialogs"], arm["goal_reached"]) for arm in report["arms"]] == [
            (1, per_arm[1], reached[1]), (2, per_arm[2], reached[2])]
        assert report["method"] == "probability to be best, Beta-Binomial, uniform prior"
        for arm in report["arms"]:
            low, high = arm["interval"]
            assert low <= arm["conversion"] <= high and low < high
        assert abs(sum(arm["probability_best"] for arm in report["arms"]) - 1) < 1e-9
        assert report["chart"][-1]["arms"][0]["dialogs"] == per_arm[1]
    assert [arm["dialogs"] for arm in after["arms"]] == [per_arm[1] + reached[1], per_arm[2] + reached[2]]


async def test_auto_promotion_happens_once_under_concurrent_checkers(
        backend: tuple[str, str | None], fake_max: FakeMax) -> None:  # noqa: F811
    database, redis = backend
    bot = "ap" + uuid.uuid4().hex[:6]
    async with replicas(3, database, fake_max.url, redis) as three:
        a = three[0]
        await two_versions(a, bot)
        experiment = await start(a, bot, {"confidence": 0.95, "min_dialogs": 5}, weights=(1, 1))
        for r in three[1:]:
            await r.runtime.bot_changed(bot)
        arms = Arms.of(experiment["id"], "registration", experiment["arms"], GOAL)
        users = list(range(2000, 2030))
        await together(*(three[u % 3].deliver(bot, msg(u, "hi")) for u in users))
        # not enough yet: no arm has converted, so nothing is promoted
        assert await asyncio.gather(*(r.app.state.promotion.check_once() for r in three)) == [[], [], []]
        winners = [u for u in users if arms.version_for(bot, str(u)) == 2]
        assert len(winners) >= 5 and len(users) - len(winners) >= 5
        await together(*(complete(three[u % 3], bot, u) for u in winners))
        made = []
        for _ in range(3):  # three rounds of three replicas checking at the same moment
            for found in await asyncio.gather(*(r.app.state.promotion.check_once() for r in three)):
                made += found
        report = (await three[2].api("GET", f"/api/bots/{bot}/experiment")).json()
        history = (await a.api("GET", f"/api/bots/{bot}/publications")).json()
        served = (await three[1].api("GET", f"/api/bots/{bot}")).json()
        async with a.app.state.db.session() as s:
            promotions = await s.scalar(select(func.count()).select_from(AuditRow).where(
                AuditRow.action == "experiment.promote", AuditRow.target == f"bot:{bot}"))
            publications = await s.scalar(select(func.count()).select_from(PublicationRow).where(
                PublicationRow.bot_id == bot))
        newcomer = 2100 + next(u for u in range(100) if arms.version_for(bot, str(2100 + u)) == 1)
        await three[2].runtime.bot_changed(bot)
        await three[2].deliver(bot, msg(newcomer, "hi"))  # assigned arm 1, but the experiment is over
        assert await session_version(three[2], bot, newcomer) == 2
    assert len(made) == 1 and made[0]["version"] == 2 and made[0]["sessions"] == "keep"
    assert promotions == 1 and publications == 3  # two set-up publishes and the promotion
    assert history[0]["version"] == 2 and history[0]["published_by"] == "auto-promotion"
    assert report["status"] == "ended" and report["promoted"]["automatic"] is True
    assert report["promoted"]["version"] == 2 and "automatically" in report["end_reason"]
    assert report["arms"][1]["probability_best"] >= 0.95
    assert served["version"] == 2 or served.get("serving", {}).get("version") == 2, served
