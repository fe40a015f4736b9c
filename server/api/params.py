"""Explicit parameter kinds for handlers (Litestar 3 drops inferring them from names)."""
from __future__ import annotations

from typing import Annotated

from litestar.di import NamedDependency
from litestar.params import PathParameter
from sqlalchemy.ext.asyncio import AsyncSession

# The request's database session, provided by server.app as the dependency "db_session".
DbSession = NamedDependency[AsyncSession]
PathStr = Annotated[str, PathParameter()]
PathInt = Annotated[int, PathParameter()]
