"""`botflow test FLOW_FILE TESTS_FILE_OR_DIR`: the saved-test runner offline, for CI pipelines."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from flows.errors import FlowFormatError
from flows.load import load
from flows.testing import report
from flows.testing.cases import BadTests, parse_cases
from flows.testing.runner import run_cases
from server.cli import EXIT_ERRORS, EXIT_OK, EXIT_UNREADABLE, Unreadable, read_document

TEST_SUFFIXES = (".json", ".yaml", ".yml")


def test_files(target: str) -> list[Path]:
    """The tests file, or every JSON/YAML file in the directory (sorted, not recursive)."""
    path = Path(target)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in TEST_SUFFIXES and p.is_file())
        if not files:
            raise Unreadable(f"the directory has no {', '.join(TEST_SUFFIXES)} files")
        return files
    return [path]


def read_tests(path: Path) -> Any:
    """A tests file's content: `{"tests": [...]}` or a bare list, in JSON or YAML."""
    import yaml

    from flows.load import _Loader

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Unreadable(f"cannot read the file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else yaml.load(text, Loader=_Loader)
    except (ValueError, yaml.YAMLError) as exc:
        raise Unreadable(f"the file is not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: "
                         f"{str(exc).splitlines()[0]}") from None


def run(args: argparse.Namespace) -> int:
    """Run the tests; 0 when all pass, 1 when any fails, 2 when an input cannot be read."""
    try:
        flow = load(read_document(args.flow))
    except Unreadable as exc:
        print(f"{args.flow}: error: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except FlowFormatError as exc:
        print(f"{args.flow}: error: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    suites: list[dict[str, Any]] = []
    try:
        files = test_files(args.tests)
    except Unreadable as exc:
        print(f"{args.tests}: error: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    for path in files:
        try:
            cases = parse_cases(read_tests(path))
        except Unreadable as exc:
            print(f"{path}: error: {exc}", file=sys.stderr)
            return EXIT_UNREADABLE
        except BadTests as exc:
            print(f"{path}: error: {exc.message}", file=sys.stderr)
            for detail in exc.details:
                print(f"  {detail['path']}: {detail['message']}", file=sys.stderr)
            return EXIT_UNREADABLE
        suites.append({"file": str(path), **run_cases(flow, cases)})
    if args.format == "json":
        print(json.dumps({"flow": flow.id, "suites": suites}, ensure_ascii=False, indent=2))
    elif args.format == "junit":
        sys.stdout.write(report.junit(suites, flow.id))
    else:
        sys.stdout.write(report.text(suites))
    return EXIT_OK if all(s["failed"] == 0 for s in suites) else EXIT_ERRORS
