"""The README and docs/ point only at files that exist, so moving a page or a module cannot leave a dead link."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_resolves() -> None:
    dead = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http://, mailto: ...
            if not (page.parent / target).exists():
                dead.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not dead, dead


def test_the_readme_first_screen_names_the_two_commands() -> None:
    head = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:30]
    assert any(line.startswith("pip install --require-hashes -r requirements/app.txt") for line in head)
    assert any(line.startswith("./tests/run.sh") for line in head)


def test_every_benchmark_is_listed_with_what_it_measures() -> None:
    listed = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    missing = [path.name for path in sorted((ROOT / "bench").glob("*.py")) if f"| `{path.name}` |" not in listed]
    assert not missing, f"docs/development.md lists no row for {missing}"
