"""How many rows an UPDATE or DELETE touched."""
from __future__ import annotations

from typing import Any

from sqlalchemy import CursorResult, Result


def changed(result: Result[Any]) -> int:
    """The row count of an UPDATE or DELETE (`AsyncSession.execute` types every result as a plain Result)."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"only an UPDATE or DELETE result counts rows, not a {type(result).__name__}")
    return result.rowcount
