"""The running release's version, from the installed package's metadata."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def botflow_version() -> str:
    """The installed botflow's version, or "unknown" when it runs from a source tree that was never installed."""
    try:
        return version("botflow")
    except PackageNotFoundError:
        return "unknown"
