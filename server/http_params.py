"""Handler parameter kinds shared by every route module (Litestar 3 drops inferring them from names)."""
from __future__ import annotations

from typing import Annotated

from litestar.params import PathParameter

PathStr = Annotated[str, PathParameter()]
PathInt = Annotated[int, PathParameter()]
