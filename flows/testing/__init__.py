"""Dialog tests: saved cases, the runner, generated cases, coverage and production replay (pure, no I/O)."""
