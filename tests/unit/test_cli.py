"""The `botflow` command: validate and export offline, with the exit codes CI pipelines rely on."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flows.export import EXPORT_FORMATS, export
from flows.load import load_text
from server.cli import (_server_hook, build_parser, cmd_db_upgrade, cmd_max_subscribe, cmd_poll, cmd_serve,
                        main)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))
REGISTRATION = ROOT / "examples" / "registration.json"


def write_variant(tmp_path: Path, name: str, change: Any) -> Path:
    """A copy of the registration example with `change(document)` applied."""
    doc = json.loads(REGISTRATION.read_text(encoding="utf-8"))
    change(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture()
def dead_end(tmp_path: Path) -> Path:
    def drop(doc: dict[str, Any]) -> None:
        doc["transitions"] = [t for t in doc["transitions"] if t["id"] != "email_ok"]
    return write_variant(tmp_path, "dead_end.json", drop)


@pytest.fixture()
def no_cancel(tmp_path: Path) -> Path:
    return write_variant(tmp_path, "no_cancel.json", lambda doc: doc["commands"].update(cancel=None))


@pytest.fixture()
def bad_format(tmp_path: Path) -> Path:
    def spoil(doc: dict[str, Any]) -> None:
        doc["states"][1]["input"]["type"] = "telephone"
        doc["transitions"][0]["on"] = "buton"
    return write_variant(tmp_path, "bad_format.json", spoil)


@pytest.fixture()
def garbage(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.json"
    path.write_text("{not json at all", encoding="utf-8")
    return path


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_validates(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"


def test_dead_end_is_reported_readably(dead_end: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(dead_end)]) == 1
    lines = capsys.readouterr().out.splitlines()
    dead = [line for line in lines if " dead_end: " in line]
    assert len(dead) == 1
    assert dead[0].startswith(f"{dead_end}: error dead_end: ") and dead[0].endswith(" [ask_email]")
    assert all(line.startswith(f"{dead_end}: error ") for line in lines)


def test_missing_cancel_names_each_waiting_state(no_cancel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(no_cancel)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if " missing_cancel: " in line]
    assert [line.rsplit(" ", 1)[1] for line in lines] == ["[ask_name]", "[ask_phone]", "[ask_email]"]


def test_format_errors_count_as_errors_with_each_detail(bad_format: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(bad_format)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{bad_format}: error: ")
    assert [line.split(":")[0].strip() for line in out[1:]] == ["states[1].input.type", "transitions[0].on"]
    assert '"telephone"' in out[1] and '"buton"' in out[2]


def test_unreadable_files_exit_2(tmp_path: Path, garbage: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.json"
    assert main(["validate", str(missing)]) == 2
    assert main(["validate", str(garbage)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{missing}: error: ") and err[1].startswith(f"{garbage}: error: ")


def test_exit_code_is_the_worst_file(dead_end: Path, garbage: Path) -> None:
    assert main(["validate", str(REGISTRATION), str(dead_end)]) == 1
    assert main(["validate", str(garbage), str(REGISTRATION), str(dead_end)]) == 2


def test_json_output_maps_each_path_to_its_result(dead_end: Path, bad_format: Path, garbage: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(REGISTRATION), str(dead_end), str(bad_format), str(garbage)]
    assert main(["validate", "--format", "json", *paths]) == 2
    out = json.loads(capsys.readouterr().out)
    assert list(out) == paths
    assert out[str(REGISTRATION)] == {"ok": True, "issues": []}
    broken = out[str(dead_end)]
    assert broken["ok"] is False and set(broken) == {"ok", "issues"}
    assert {"dead_end", "no_path_to_final", "unreachable_state"} <= {i["code"] for i in broken["issues"]}
    assert all(set(i) == {"code", "severity", "message", "states", "transitions", "params"} for i in broken["issues"])
    malformed = out[str(bad_format)]
    assert malformed["ok"] is False and isinstance(malformed["error"], str)
    assert [d["path"] for d in malformed["details"]] == ["states[1].input.type", "transitions[0].on"]
    assert set(out[str(garbage)]) == {"ok", "error"} and out[str(garbage)]["ok"] is False


def test_yaml_documents_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flow = load_text(REGISTRATION.read_bytes())
    path = tmp_path / "registration.yaml"
    path.write_text(export(flow, "yaml")[0], encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_export_writes_each_format(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = export(load_text(REGISTRATION.read_bytes()), fmt)[0]
    assert main(["export", str(REGISTRATION), "--format", fmt]) == 0
    assert capsys.readouterr().out == expected
    out = tmp_path / f"flow.{fmt}"
    assert main(["export", str(REGISTRATION), "--format", fmt, "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == expected
    assert capsys.readouterr().out == ""


def test_export_failures(tmp_path: Path, bad_format: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "missing.json"), "--format", "dot"]) == 2
    assert main(["export", str(bad_format), "--format", "dot"]) == 1
    assert "states[1].input.type" in capsys.readouterr().err
    assert main(["export", str(REGISTRATION), "--format", "png"]) == 2  # argparse usage error


def test_server_commands_are_wired_to_their_hooks() -> None:
    parser = build_parser()
    serve = parser.parse_args(["serve", "--port", "9000"])
    assert (serve.handler, serve.host, serve.port) == (cmd_serve, "127.0.0.1", 9000)
    assert parser.parse_args(["db", "upgrade"]).handler is cmd_db_upgrade
    poll = parser.parse_args(["poll", "--bot", "shop"])
    assert (poll.handler, poll.bot) == (cmd_poll, "shop")
    sub = parser.parse_args(["max", "subscribe", "--bot", "shop", "--url", "https://bots.example/wh"])
    assert (sub.handler, sub.bot, sub.url) == (cmd_max_subscribe, "shop", "https://bots.example/wh")
    assert main(["poll"]) == 2 and main(["max", "subscribe", "--bot", "shop"]) == 2


def test_a_hook_imports_its_module_only_when_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "botflow_hook_probe.py").write_text(
        "CALLS = []\ndef run(args):\n    CALLS.append(args.port)\n    return 3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "botflow_hook_probe", raising=False)
    hook = _server_hook("botflow_hook_probe", "run")
    assert "botflow_hook_probe" not in sys.modules
    args = build_parser().parse_args(["serve", "--port", "8123"])
    assert hook(args) == 3
    assert sys.modules["botflow_hook_probe"].CALLS == [8123]
    # A missing server module is a broken install: it fails loudly instead of printing a soft message.
    with pytest.raises(ModuleNotFoundError, match="botflow_hook_absent"):
        _server_hook("botflow_hook_absent", "run")(args)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "server.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, encoding="utf-8", timeout=60)


def test_module_entry_point_in_a_real_process(garbage: Path) -> None:
    ok = run_cli("validate", *[str(p.relative_to(ROOT)) for p in EXAMPLES])
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines() == [f"{p.relative_to(ROOT)}: ok" for p in EXAMPLES]
    bad = run_cli("validate", "--format", "json", str(garbage))
    assert bad.returncode == 2
    assert json.loads(bad.stdout)[str(garbage)]["ok"] is False
    mermaid = run_cli("export", "examples/support.json", "--format", "mermaid")
    assert mermaid.returncode == 0 and "waiting_operator --> operators_busy: timeout 1800s" in mermaid.stdout


def test_offline_commands_never_import_the_server() -> None:
    code = ("import sys; from server.cli import main; main(['validate', 'examples/order.json']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('litestar', 'sqlalchemy', 'redis')"
            " or m.startswith(('server.serve', 'server.db', 'server.runtime'))))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          encoding="utf-8", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"


def test_version_prints_the_installed_release(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"botflow {version('botflow')}"
