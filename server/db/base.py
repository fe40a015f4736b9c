"""The declarative base every table of the app shares, so Alembic sees one metadata."""
from __future__ import annotations

from sqlalchemy import MetaData, Table
from sqlalchemy.orm import DeclarativeBase

# Named constraints keep Alembic migrations stable across SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base class of all models."""

    metadata = MetaData(naming_convention=NAMING)


def table_of(model: type[Base]) -> Table:
    """A model's table, as the Table it is (declarative models type `__table__` as any FromClause)."""
    table = model.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not mapped to a table")
    return table
