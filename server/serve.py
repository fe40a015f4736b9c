"""`botflow serve`: run the app under uvicorn; SIGTERM drains requests in flight and exits 0."""
from __future__ import annotations

import logging
import os
import signal
import sys
from argparse import Namespace
from typing import NoReturn

from server.settings import settings_or_exit

log = logging.getLogger("botflow.serve")


def _interrupt(number: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(number).name)


def _leave(status: int) -> NoReturn:
    """Exit now: nothing was started that needs closing, and tearing down a fully imported app's heap takes
    seconds on a busy machine, while a stop signal is owed an exit within one."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def run(args: Namespace) -> int:
    """Serve on args.host:args.port; a bad setting prints one line and exits with status 2."""
    settings = settings_or_exit(serving=True)
    # Until uvicorn takes the signals over, Ctrl+C and SIGTERM end the start at once, whatever it is doing.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    try:
        import uvicorn
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        from server.app import create_app
        from server.logs import configure
        from server.preflight import prepare_or_exit_status
        from server.read_deadline import guarded

        configure(settings.log_format, settings.secret_key, [settings.bootstrap_token, settings.metrics_token])
        status = prepare_or_exit_status(settings)
        signal.signal(signal.SIGTERM, _interrupt)  # the wait handed the signals back to their defaults
        signal.signal(signal.SIGINT, _interrupt)
        if status is not None:
            _leave(status)
        app = create_app(settings)
        host = getattr(args, "host", None) or "127.0.0.1"
        port = int(getattr(args, "port", None) or 8000)
        # No access log: one formatted line per request costs about as much CPU as a webhook's reply call, and
        # the runtime logs what goes wrong itself. `--access-log` turns it back on.
        config = uvicorn.Config(app, host=host, port=port, log_level="info", proxy_headers=True, log_config=None,
                                http=guarded(HttpToolsProtocol, settings.max_connections),
                                access_log=bool(getattr(args, "access_log", False)),
                                timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)))
    except KeyboardInterrupt as stop:
        print(f"botflow: stopped by {stop.args[0] if stop.args else 'SIGINT'} before the server started",
              file=sys.stderr)
        _leave(0)
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
