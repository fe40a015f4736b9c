"""CSV the product writes: no cell a spreadsheet would run as a formula (OWASP's CSV injection rule)."""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

# A cell starting with one of these is a formula (or DDE call) to Excel, LibreOffice or Google Sheets;
# the full-width forms are read as formulas by some of them too.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "＝", "＋", "－", "＠")
CSV_MEDIA_TYPE = "text/csv"  # the framework adds "; charset=utf-8" once; naming it here too would say it twice


def safe_cell(value: Any) -> Any:
    """Text that would start a formula gets a leading apostrophe, so it shows as written; numbers pass."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def to_csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """Rows as CSV text with every cell neutralised."""
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row])
    return out.getvalue()
