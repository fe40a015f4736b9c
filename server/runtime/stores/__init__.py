"""Dialog stores behind narrow ports (`ports`): memory (tests), SQL (no Redis), Redis (production)."""
from server.runtime.stores.base import BUSY, DUPLICATE, OK, Loaded, LockLost, StoreUnavailable, TurnCommit, new_token
from server.runtime.stores.ports import DialogStore

__all__ = ["BUSY", "DUPLICATE", "OK", "DialogStore", "Loaded", "LockLost", "StoreUnavailable", "TurnCommit",
           "new_token"]
