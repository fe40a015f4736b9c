"""The /static file system: a name the operating system cannot even look up is simply not there (404, not 500)."""
from __future__ import annotations

from typing import Any

from litestar.file_system import BaseLocalFileSystem


class StaticFiles(BaseLocalFileSystem):
    """Local files, where "name too long" and similar lookup failures read as a missing file."""

    async def info(self, path: Any, **kwargs: Any) -> Any:
        try:
            return await super().info(path, **kwargs)
        except PermissionError:
            raise
        except OSError as exc:
            raise FileNotFoundError(str(path)[:200]) from exc
