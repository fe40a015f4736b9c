"""The MAX runtime: webhooks, dialog stores, outbox, timers."""
