"""Imports every model module so Base.metadata is complete (Alembic and tests read it from here)."""
from __future__ import annotations

from server.db import experiments, funnel, models, runtime_tables, saved_tests, uploads  # noqa: F401
from server.db.base import Base

metadata = Base.metadata
