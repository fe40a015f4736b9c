"""Plain async functions over an AsyncSession, shared by the JSON API and the designer pages."""
