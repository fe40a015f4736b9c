"""The test runner: the engine with the simulator's rules, first difference side by side, start anywhere."""
from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from flows.load import load
from flows.testing.cases import BadTests, parse_cases
from flows.testing.runner import run_cases

ROOT = Path(__file__).resolve().parents[2]
REGISTRATION = ROOT / "examples" / "registration.json"


@pytest.fixture()
def flow():
    return load(json.loads(REGISTRATION.read_text(encoding="utf-8")))


HAPPY = {"name": "happy", "steps": [
    {"update": {"text": "/start"}, "expect": {"state": "ask_name", "replies": ["Привет! Как вас зовут?"]}},
    {"update": {"text": "Иван"}, "expect": {"state": "ask_phone", "data": {"name": "Иван"}}},
    {"update": {"text": "+7 912 345-67-89"}, "expect": {"state": "ask_email", "data": {"phone": "+79123456789"}}},
    {"update": {"text": "ivan@example.com"}, "expect": {
        "state": "ask_pdn", "buttons": [[["Да", "Нет"]]]}},
    {"update": {"payload": "yes"}, "expect": {"state": None, "data": {"pdn_accepted": "yes"}}},
]}


def test_a_matching_dialog_passes_and_reports_the_transitions(flow) -> None:
    report = run_cases(flow, parse_cases({"tests": [HAPPY]}))
    assert report["passed"] == 1 and report["failed"] == 0
    assert report["results"][0]["transitions"] == ["name_ok", "phone_ok", "email_ok", "pdn_yes_button"]
    assert report["coverage"]["percent"] == round(100 * 4 / 6, 1)


def test_the_first_differing_step_is_shown_expected_beside_actual(flow) -> None:
    case = json.loads(json.dumps(HAPPY))
    case["steps"][1]["expect"] = {"state": "ask_email", "data": {"name": "Пётр"}}
    case["steps"][3]["expect"]["state"] = "nowhere"  # a later difference is not the first
    result = run_cases(flow, parse_cases([case]))["results"][0]
    assert not result["passed"]
    failure = result["failure"]
    assert failure["step"] == 1 and failure["differs"] == ["state", "data"]
    assert failure["expected"] == {"state": "ask_email", "data": {"name": "Пётр"}}
    assert failure["actual"] == {"state": "ask_phone", "data": {"name": "Иван"}}
    assert "name_ok fired" in failure["reason"]
    # The run went on past the failure, so coverage still counts the later steps.
    assert "pdn_yes_button" in result["transitions"]


def test_switched_off_expectations_are_not_checked(flow) -> None:
    case = {"name": "loose", "steps": [{"update": {"text": "/start"}}, {"update": {"text": "x"}, "expect": {}}]}
    assert run_cases(flow, parse_cases([case]))["passed"] == 1


def test_start_anywhere_with_data_and_idle_advancing_the_clock(flow) -> None:
    case = {"name": "from pdn", "start": {"state": "ask_pdn", "data": {"name": "Ann", "phone": "+79990000000"}},
            "steps": [{"update": {"idle": 901}, "expect": {"replies": ["Вы хотели завершить регистрацию. Продолжим?"],
                                                          "state": "ask_pdn"}},
                      {"update": {"payload": "yes"}, "expect": {"replies": ["Готово! Имя: Ann, телефон: +79990000000"]}}]}
    report = run_cases(flow, parse_cases([case]))
    assert report["passed"] == 1, report["results"]
    nowhere = run_cases(flow, parse_cases([{"name": "x", "start": {"state": "gone"},
                                            "steps": [{"update": {"text": "hi"}}]}]))["results"][0]
    assert not nowhere["passed"] and "gone" in nowhere["error"]


def test_malformed_tests_get_one_detail_per_problem() -> None:
    with pytest.raises(BadTests) as caught:
        parse_cases({"tests": [{"name": "", "steps": [{"update": {"txt": "a"}}]},
                               {"name": "b", "steps": [{"update": {"text": "a"}, "expect": {"state": 3}}]}]})
    paths = [d["path"] for d in caught.value.details]
    assert paths == ["tests[0].name", "tests[0].steps[0].update", "tests[1].steps[0].expect.state"]
    with pytest.raises(BadTests):
        parse_cases("not a list")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "server.cli", "test", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_cli_exit_codes_and_formats(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"tests": [HAPPY]}, ensure_ascii=False), encoding="utf-8")
    ok = cli(str(REGISTRATION), str(good))
    assert ok.returncode == 0, ok.stderr
    assert "ok     happy" in ok.stdout and "1 passed, 0 failed" in ok.stdout
    # Beside transitions, the CI log names the points no test touched.
    assert "points covered 6/16" in ok.stdout and "not covered: invalid:ask_name" in ok.stdout
    bad_case = json.loads(json.dumps(HAPPY))
    bad_case["name"] = "wrong greeting"
    bad_case["steps"][0]["expect"]["replies"] = ["Hello"]
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps([HAPPY], ensure_ascii=False), encoding="utf-8")
    (folder / "b.yaml").write_text(json.dumps({"tests": [bad_case]}, ensure_ascii=False), encoding="utf-8")
    failed = cli(str(REGISTRATION), str(folder))
    assert failed.returncode == 1
    assert 'replies: expected ["Hello"]' in failed.stdout and "1 passed, 1 failed" in failed.stdout
    junit = cli(str(REGISTRATION), str(folder), "--format", "junit")
    assert junit.returncode == 1
    root = ET.fromstring(junit.stdout)
    assert root.get("tests") == "2" and root.get("failures") == "1"
    failure = root.find(".//testcase[@name='wrong greeting']/failure")
    assert failure is not None and "step 1" in failure.get("message")
    as_json = json.loads(cli(str(REGISTRATION), str(good), "--format", "json").stdout)
    assert as_json["suites"][0]["passed"] == 1
    assert cli(str(REGISTRATION), str(tmp_path / "missing.json")).returncode == 2
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    assert cli(str(REGISTRATION), str(tmp_path / "broken.json")).returncode == 2
    (tmp_path / "bad_shape.json").write_text('{"tests": [{"name": "x"}]}', encoding="utf-8")
    shape = cli(str(REGISTRATION), str(tmp_path / "bad_shape.json"))
    assert shape.returncode == 2 and "tests[0].steps" in shape.stderr
    assert cli(str(tmp_path / "broken.json"), str(good)).returncode == 2


def test_the_keys_a_state_reads_and_the_payloads_it_still_takes(flow) -> None:
    from flows.testing.reads import keys_read, live_payloads

    assert keys_read(flow, "ask_pdn") == ["name", "phone"]
    assert keys_read(flow, "ask_name") == []  # it asks for the name itself
    assert keys_read(flow, "nowhere") == []
    live = live_payloads(flow, "ask_pdn")
    assert {"yes", "no", "/start", "назад"} <= set(live)
    assert "yes" not in live_payloads(flow, "ask_name") and "yes" not in live_payloads(flow, None)


def test_the_testing_package_imports_no_io_library() -> None:
    code = ("import sys, flows.testing.generate, flows.testing.replay, flows.testing.report, flows.testing.reads; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('litestar', 'sqlalchemy', 'redis', 'httpx', 'asyncio', 'socket', 'server')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
