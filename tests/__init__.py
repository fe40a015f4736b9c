"""Test suite; a package so shared helpers import as `tests.<module>` (e.g. `tests.fakemax`)."""
