"""Errors raised while reading a flow document."""
from __future__ import annotations

from typing import Any


def _rebuilt(cls: type[Exception], args: tuple[object, ...], state: dict[str, object]) -> Exception:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class CarriedError(Exception):
    """An error that crosses a process boundary whole (pickle would call __init__ with `args` alone)."""

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuilt, (type(self), self.args, self.__dict__))


class DocumentSyntaxError(CarriedError):
    """The text is not JSON or YAML, not UTF-8, or not an object at the top.

    `code` and `params` let a page say it in the reader's language ("syntax_at": format, line, column).
    """

    def __init__(self, message: str, code: str = "", params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.params: dict[str, Any] = dict(params or {})


class FlowFormatError(CarriedError):
    """The document parses but breaks the `botflow/v1` format; one detail per problem."""

    def __init__(self, message: str, details: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: list[dict[str, str]] = list(details or [])

    def __str__(self) -> str:
        lines = [self.message] + [f"  {d['path'] or '(document)'}: {d['message']}" for d in self.details]
        return "\n".join(lines)
