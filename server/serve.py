"""`botflow serve`: run the app under uvicorn."""
from __future__ import annotations

from argparse import Namespace

from server.settings import settings_or_exit


def run(args: Namespace) -> int:
    """Serve on args.host:args.port; a bad setting prints one line and exits with status 2."""
    settings = settings_or_exit()
    import uvicorn

    from server.app import create_app

    app = create_app(settings)
    host = getattr(args, "host", None) or "127.0.0.1"
    port = int(getattr(args, "port", None) or 8000)
    # No access log: one formatted line per request costs about as much CPU as a webhook's reply call, and
    # the runtime logs what goes wrong itself. `--access-log` turns it back on.
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=True,
                access_log=bool(getattr(args, "access_log", False)))
    return 0
