"""English sentences that also carry a code and params, so a reader's catalogue can say them in their language."""
from __future__ import annotations

from typing import Any


class Said(str):
    """The English text itself (byte for byte what the API shows), plus `code` and `params` for translation."""

    code: str
    params: dict[str, Any]

    def __new__(cls, text: str, code: str, **params: Any) -> Said:
        said = super().__new__(cls, text)
        said.code, said.params = code, params
        return said

    def __reduce__(self) -> tuple[Any, ...]:
        return (_said, (str(self), self.code, self.params))

    def prefixed(self, head: str) -> Said:
        """The same problem after an English lead-in (the code and params stay)."""
        return Said(head + self, self.code, **self.params)


def _said(text: str, code: str, params: dict[str, Any]) -> Said:
    return Said(text, code, **params)


def detail(path: str, message: str) -> dict[str, Any]:
    """A load error's detail: the path and English message, with the code and params when the message has them."""
    found: dict[str, Any] = {"path": path, "message": str(message)}
    if isinstance(message, Said):
        found["code"], found["params"] = message.code, dict(message.params)
    return found
