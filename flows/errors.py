"""Errors raised while reading a flow document."""
from __future__ import annotations


class DocumentSyntaxError(Exception):
    """The text is not JSON or YAML, not UTF-8, or not an object at the top."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class FlowFormatError(Exception):
    """The document parses but breaks the `botflow/v1` format; one detail per problem."""

    def __init__(self, message: str, details: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: list[dict[str, str]] = list(details or [])

    def __str__(self) -> str:
        lines = [self.message] + [f"  {d['path'] or '(document)'}: {d['message']}" for d in self.details]
        return "\n".join(lines)
