"""Explicit parameter kinds for handlers (Litestar 3 drops inferring them from names)."""
from __future__ import annotations

from litestar.di import NamedDependency
from sqlalchemy.ext.asyncio import AsyncSession

from server.http_params import PathInt, PathStr

__all__ = ["DbSession", "PathInt", "PathStr"]

# The request's database session, provided by server.app as the dependency "db_session".
DbSession = NamedDependency[AsyncSession]
