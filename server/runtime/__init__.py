"""The runtime: webhooks, dialog stores, outbox, timers (messengers are `server.channels`)."""
