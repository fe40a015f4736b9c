"""The `botflow` command: offline `validate` and `export`, and entry points into the server."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _quit_while_loading(number: int, _frame: object) -> None:
    # Ctrl+C or SIGTERM while the command's modules still load: leave at once, without a half-import traceback.
    os._exit(128 + number)


signal.signal(signal.SIGTERM, _quit_while_loading)
signal.signal(signal.SIGINT, _quit_while_loading)

from flows.errors import DocumentSyntaxError, FlowFormatError
from flows.export import EXPORT_FORMATS, export
from flows.load import load, parse_text
from flows.validate import validation_result
from server.version import botflow_version

EXIT_OK, EXIT_ERRORS, EXIT_UNREADABLE = 0, 1, 2
_SUFFIX_FORMATS = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}


class Unreadable(Exception):
    """The file cannot be read, or its text is not a JSON/YAML object."""


def read_document(path: str) -> Any:
    """The parsed document in a file; the suffix picks JSON or YAML, anything else is sniffed."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise Unreadable(f"cannot read the file: {exc.strerror or exc}") from None
    try:
        return parse_text(data, _SUFFIX_FORMATS.get(Path(path).suffix.lower()))
    except DocumentSyntaxError as exc:
        raise Unreadable(exc.message) from None


def check_file(path: str) -> tuple[int, dict[str, Any]]:
    """Exit code and result object for one file, in the shape of `GET /api/flows/{id}/validation`."""
    try:
        flow = load(read_document(path))
    except Unreadable as exc:
        return EXIT_UNREADABLE, {"ok": False, "error": str(exc)}
    except FlowFormatError as exc:
        return EXIT_ERRORS, {"ok": False, "error": exc.message, "details": exc.details}
    result = validation_result(flow)
    errors = any(issue["severity"] == "error" for issue in result["issues"])
    return (EXIT_ERRORS if errors else EXIT_OK), result


def _text_report(path: str, code: int, result: dict[str, Any]) -> None:
    """Print one file's outcome a person can read in a CI log."""
    if code == EXIT_UNREADABLE:
        print(f"{path}: error: {result['error']}", file=sys.stderr)
        return
    if "error" in result:
        print(f"{path}: error: {result['error']}")
        for detail in result.get("details", []):
            print(f"  {detail['path'] or '(document)'}: {detail['message']}")
        return
    for issue in result["issues"]:
        states = f" [{', '.join(issue['states'])}]" if issue["states"] else ""
        print(f"{path}: {issue['severity']} {issue['code']}: {issue['message']}{states}")
    if not result["issues"]:
        print(f"{path}: ok")


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every file; the exit code is the worst outcome (0 clean, 1 errors, 2 unreadable)."""
    worst, results = EXIT_OK, {}
    for path in args.files:
        code, result = check_file(path)
        worst = max(worst, code)
        results[path] = result
        if args.format == "text":
            _text_report(path, code, result)
    if args.format == "json":
        print(json.dumps(results, ensure_ascii=False, indent=2))
    return worst


def cmd_export(args: argparse.Namespace) -> int:
    """Write the flow in the chosen format to stdout or `-o`."""
    try:
        flow = load(read_document(args.file))
    except Unreadable as exc:
        print(f"{args.file}: error: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except FlowFormatError as exc:
        print(f"{args.file}: error: {exc}", file=sys.stderr)
        return EXIT_ERRORS
    text, _media_type = export(flow, args.format)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"{args.output}: error: cannot write the file: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    return EXIT_OK


# --- Server commands: implemented in server modules, imported only when run, so that the offline
# commands above work wherever `flows` does.

def _server_hook(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports `module` on use and calls `function(args)`."""
    def handler(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(module), function)(args) or 0)
    handler.__doc__ = f"Run {module}:{function}(args)."
    return handler


cmd_serve = _server_hook("server.serve", "run")
cmd_db_upgrade = _server_hook("server.db.migrate", "upgrade_cli")
cmd_poll = _server_hook("server.poll", "run")
cmd_max_subscribe = _server_hook("server.channels.max.subscribe", "run")
cmd_test = _server_hook("server.testing_cli", "run")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(prog="botflow", description="Design, check and run bot dialogs.")
    parser.add_argument("--version", action="version", version=f"botflow {botflow_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="validate flow documents (exit 0 ok, 1 errors, 2 unreadable)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="json: one object mapping each FILE to its validation result")
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser("export", help="export a flow document as json, yaml, mermaid, dot or scxml")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=EXPORT_FORMATS, default="json")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("test", help="run saved dialog tests on a flow (exit 0 all pass, 1 failures, 2 unreadable)")
    p.add_argument("flow", metavar="FLOW_FILE")
    p.add_argument("tests", metavar="TESTS_FILE_OR_DIR", help="a tests file, or a directory of them")
    p.add_argument("--format", choices=("text", "json", "junit"), default="text",
                   help="junit: JUnit XML for CI systems")
    p.set_defaults(handler=cmd_test)

    p = sub.add_parser("serve", help="run designer, API and runtime in one process")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--access-log", action="store_true", help="log one line per HTTP request (off by default)")
    p.set_defaults(handler=cmd_serve, starts_server=True)  # serve keeps quitting at once until it listens

    db = sub.add_parser("db", help="database maintenance").add_subparsers(
        dest="db_command", required=True, metavar="DB_COMMAND")
    db.add_parser("upgrade", help="apply database migrations").set_defaults(handler=cmd_db_upgrade)

    p = sub.add_parser("poll", help="receive a bot's updates by long polling instead of a webhook")
    p.add_argument("--bot", required=True, metavar="ID", help="id of a bot created through the API")
    p.set_defaults(handler=cmd_poll)

    mx = sub.add_parser("max", help="MAX messenger operations").add_subparsers(
        dest="max_command", required=True, metavar="MAX_COMMAND")
    p = mx.add_parser("subscribe", help="subscribe a bot's webhook with the MAX API")
    p.add_argument("--bot", required=True, metavar="ID", help="id of a bot created through the API")
    p.add_argument("--url", required=True, metavar="URL",
                   help="https:// webhook URL, or this server's base URL to get /webhooks/max/<bot> appended")
    p.set_defaults(handler=cmd_max_subscribe)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (usage errors give 2, like argparse)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # usage error or --help: argparse already printed
        return exc.code if isinstance(exc.code, int) else EXIT_UNREADABLE
    if not getattr(args, "starts_server", False):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
