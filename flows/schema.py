"""The detailed check of a raw document: every way it breaks the format, one detail each with its path."""
from __future__ import annotations

from typing import Any

from flows.checks import Report, json_data_problems
from flows.format import DOCUMENT


def format_problems(doc: Any, fine: set[int] | frozenset[int] = frozenset()) -> list[dict[str, str]]:
    """Every format problem of a raw document, one detail each (empty when it loads)."""
    # States and transitions whose id is in `fine` (see `flows.fastcheck.fine_elements`) are known to
    # be free of problems and are not walked again: in a large draft with one mistake, only the broken
    # element pays for paths and messages.
    report = Report(fine)
    json_data_problems(doc, report)
    DOCUMENT.check(doc, "", report, 1)
    return report.details
