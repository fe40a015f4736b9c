"""The Litestar application: API, persistence and the MAX runtime."""
