"""The pure core: the `botflow/v1` format, graph validation and the dialog engine (no I/O imports)."""
