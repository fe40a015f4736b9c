"""Messenger adapters: each package (`max/`) turns its messenger's updates into `base.Incoming` and sends
the runtime's outbox items its messenger's way; the runtime, engine and stores know none of them."""
