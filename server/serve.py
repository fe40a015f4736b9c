"""`botflow serve`: run the app under uvicorn; SIGTERM drains requests in flight and exits 0."""
from __future__ import annotations

import logging
import signal
from argparse import Namespace

from server.settings import settings_or_exit

log = logging.getLogger("botflow.serve")


def run(args: Namespace) -> int:
    """Serve on args.host:args.port; a bad setting prints one line and exits with status 2."""
    settings = settings_or_exit()
    import uvicorn

    from server.app import create_app
    from server.logs import configure
    from server.runtime.webhook_protocol import WebhookProtocol

    configure(settings.log_format, settings.secret_key, [settings.bootstrap_token, settings.metrics_token])

    app = create_app(settings)
    host = getattr(args, "host", None) or "127.0.0.1"
    port = int(getattr(args, "port", None) or 8000)
    # No access log: one formatted line per request costs about as much CPU as a webhook's reply call, and
    # the runtime logs what goes wrong itself. `--access-log` turns it back on.
    # MAX deliveries are answered by the HTTP protocol itself (webhook_protocol.py), the rest through ASGI.
    config = uvicorn.Config(app, host=host, port=port, log_level="info", proxy_headers=True, log_config=None,
                            http=WebhookProtocol.bound(app),
                            access_log=bool(getattr(args, "access_log", False)),
                            timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)))
    server = uvicorn.Server(config)
    stopped_by: list[int] = []
    # uvicorn re-raises the stop signal once it has shut down gracefully; with the default handler that
    # kills the process (status -15), so a clean stop would look like a crash to a supervisor.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, _frame: stopped_by.append(number))
    server.run()
    if stopped_by:
        log.info("stopped on %s after draining requests in flight", signal.Signals(stopped_by[0]).name)
    return 0 if server.started or stopped_by else 1
