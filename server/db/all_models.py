"""Imports every model module so Base.metadata is complete (Alembic and tests read it from here)."""
from __future__ import annotations

from server.db import funnel, models, saved_tests  # noqa: F401
from server.db.base import Base
from server.runtime import models as runtime_models  # noqa: F401

metadata = Base.metadata
