"""A fake MAX Bot API for development and tests: `FakeMax` serves it on loopback (`python -m server.channels.max.fake`)."""
from server.channels.max.fake.server import FakeMax, main, quiet_collector

__all__ = ["FakeMax", "main", "quiet_collector"]
