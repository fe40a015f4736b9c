"""The designer: server-rendered pages, templates and the editor."""
