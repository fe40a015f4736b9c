"""Development aids that ship with the server: a fake MAX Bot API for tests and local runs."""
