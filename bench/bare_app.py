"""The HTTP ceiling: a bare Litestar app whose webhook route only answers 200, served like `botflow serve`."""
from __future__ import annotations

import argparse

import uvicorn
from litestar import Litestar, Response, post


@post("/webhooks/max/{bot_id:str}", status_code=200)
async def webhook(bot_id: str) -> Response:
    return Response(b'{"ok":true}', media_type="application/json")


app = Litestar(route_handlers=[webhook])

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8001)
    args = ap.parse_args()
    # The same uvicorn options server/serve.py uses, so only the app differs.
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="info", proxy_headers=True, access_log=False)
