"""The JSON API: one controller per resource."""
from __future__ import annotations

from server.api import health

ROUTES: list = [*health.ROUTES]
