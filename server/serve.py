"""`botflow serve`: run the app under uvicorn."""
from __future__ import annotations

import sys
from argparse import Namespace

from server.settings import Settings, SettingsError, read_dotenv


def run(args: Namespace) -> int:
    """Serve on args.host:args.port; a bad setting prints one line and exits with status 2."""
    try:
        settings = Settings.from_env(read_dotenv())
    except SettingsError as exc:
        print(f"botflow: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    import uvicorn

    from server.app import create_app

    app = create_app(settings)
    host = getattr(args, "host", None) or "127.0.0.1"
    port = int(getattr(args, "port", None) or 8000)
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=True)
    return 0
