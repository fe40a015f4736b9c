"""Dialog stores behind one interface: memory (tests), SQL (no Redis), Redis (production)."""
from server.runtime.stores.base import (
    BUSY, DUPLICATE, OK, DialogStore, Loaded, LockLost, StoreUnavailable, Write, new_token,
)

__all__ = ["BUSY", "DUPLICATE", "OK", "DialogStore", "Loaded", "LockLost", "StoreUnavailable", "Write",
           "new_token"]
