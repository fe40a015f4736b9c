"""The Grafana dashboard and the Prometheus alert rules under deploy/ name only metrics a replica exposes, cover
what an operator watches, and the rules are valid PromQL; the metrics added for them count what they say."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import Harness, msg, registration, running, texts
from tests.integration.runtime_support import sqlite_url  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "botflow.json"
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
BOT = "watchedbot"
NAME = re.compile(r"\bbotflow_[a-z_]+\b")
# What the issue asks an operator to see, each in the dashboard and in an alert.
WATCHED = {"botflow_webhook_requests_total", "botflow_turn_seconds_bucket", "botflow_outbox_depth",
           "botflow_outbox_oldest_seconds", "botflow_replies_total", "botflow_max_rate_limited_total",
           "botflow_subscription_up", "botflow_clock_offset_seconds", "botflow_dependency_up"}
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
            "gauge": ("",), "info": ("_info",), "summary": ("", "_sum", "_count", "_created")}


def dashboard_expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text(encoding="utf-8"))["panels"]
    return [t["expr"] for panel in panels for t in panel.get("targets", [])]


def rule_expressions() -> list[str]:
    groups = yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def exposed(text: str) -> set[str]:
    """Every series name a scrape may carry, from each family's declared type (labelled ones without a child yet
    included)."""
    return {family.name + suffix for family in text_string_to_metric_families(text)
            for suffix in SUFFIXES[family.type]}


def value(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


@pytest.fixture
async def harness(fake_max: FakeMax, sqlite_url: str) -> Harness:  # noqa: F811
    async with running(sqlite_url, fake_max.url, None) as h:
        await h.bot(BOT)
        await h.publish(BOT, registration())
        yield h


def test_the_dashboard_and_rules_watch_what_matters() -> None:
    for where, expressions in (("dashboard", dashboard_expressions()), ("rules", rule_expressions())):
        named = {n for e in expressions for n in NAME.findall(e)}
        assert WATCHED <= named, f"{where} does not watch {sorted(WATCHED - named)}"
    assert any('result="unknown_outcome"' in e for e in rule_expressions())


async def test_every_metric_the_dashboard_and_rules_name_is_in_metrics(harness: Harness) -> None:
    scrape = (await harness.client.get("/metrics")).text
    names = exposed(scrape)
    assert "botflow_webhook_requests_total" in names and "botflow_turn_seconds_bucket" in names
    for where, expressions in (("dashboard", dashboard_expressions()), ("rules", rule_expressions())):
        for expression in expressions:
            missing = set(NAME.findall(expression)) - names
            assert not missing, f"{where}: {expression!r} names {sorted(missing)}, which /metrics does not have"


async def test_dependencies_are_reported_up_and_429s_from_max_are_counted(harness: Harness,
                                                                          fake_max: FakeMax) -> None:  # noqa: F811
    before = (await harness.client.get("/metrics")).text
    assert value(before, "botflow_dependency_up", dependency="database") == 1
    assert value(before, "botflow_dependency_up", dependency="dialog_store") == 1
    fake_max.fail_next(1, status=429, path="/messages")
    assert (await harness.deliver(BOT, msg(5, "/start"))).status_code == 200
    await fake_max.wait_for(lambda f: texts(f, 5), timeout=15)  # sent once the 429's Retry-After passed
    after = (await harness.client.get("/metrics")).text
    assert value(after, "botflow_max_rate_limited_total", bot=BOT) == \
        value(before, "botflow_max_rate_limited_total", bot=BOT) + 1


async def test_a_database_that_does_not_answer_reads_as_down(harness: Harness) -> None:
    original = harness.app.state.db.ping

    async def dead(*_: object) -> bool:
        raise ConnectionRefusedError("database gone")

    harness.app.state.db.ping = dead
    try:
        scrape = (await harness.client.get("/metrics")).text
        assert value(scrape, "botflow_dependency_up", dependency="database") == 0
        assert value(scrape, "botflow_dependency_up", dependency="dialog_store") == 1
    finally:
        harness.app.state.db.ping = original


def test_promtool_accepts_the_rules() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed (tests/run.sh installs it: apt-get install prometheus)")
    answer = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert answer.returncode == 0, answer.stdout + answer.stderr
