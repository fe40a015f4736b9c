"""GET /api/bots/{bot}/funnel: a flow version's funnel over a period, optionally beside a second version."""
from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import QueryParameter

from server.auth import requires_role
from server.errors import BadRequest, NotFound
from server.http_params import PathStr
from server.runtime.funnel_counts import BUCKETS, HOUR, counted
from server.csv_cells import CSV_MEDIA_TYPE
from server.runtime.funnel_report import report, to_csv
from server.api.runtime_reads import bot_or_404, store_read
from server.runtime.lifecycle import runtime_of

DEFAULT_DAYS = 7
MAX_DAYS = 400  # longer periods read more rows than a page wants to wait for; ask for a year at most


def _instant(name: str, raw: str | None, default: float) -> float:
    """An ISO 8601 time (a date, or a date and time; UTC unless it names an offset) as Unix seconds."""
    if raw is None or raw == "":
        return default
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"{name} must be an ISO 8601 date or time such as 2026-12-01 or "
                         f"2026-12-01T10:00:00Z; got {raw!r}.") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def _version(name: str, raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= 2**31 - 1:
        raise BadRequest(f"{name} must be a version number (1, 2, ...); got {raw!r}.")
    return int(raw)


def period(start_raw: str | None, end_raw: str | None, now: float) -> tuple[float, float, range]:
    """(from, to, hour numbers counted); whole hours: an hour is counted when the period touches it."""
    end = _instant("to", end_raw, now)
    start = _instant("from", start_raw, end - DEFAULT_DAYS * 86400)
    if start >= end:
        raise BadRequest("from must be earlier than to.")
    if end - start > MAX_DAYS * 86400:
        raise BadRequest(f"The period may span at most {MAX_DAYS} days; choose a shorter one.")
    return start, end, range(int(start // HOUR), int(math.ceil(end / HOUR)))


def _groups(languages: tuple[str, ...], version: int, language: str | None) -> list[str]:
    """The counter groups' version parts to add up: every language's (and dialogs counted without one), or
    one language's (the default's with those without one); 400 for a language the version does not list."""
    if not language:
        return [str(version)] + [counted(version, code) for code in languages]
    if language not in languages:
        listed = ", ".join(languages) or "none"
        raise BadRequest(f"Version {version} has no language {language!r}; its languages are: {listed}.")
    return ([str(version)] if language == languages[0] else []) + [counted(version, language)]


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


@get("/api/bots/{bot_id:str}/funnel", guards=[requires_role("viewer")], summary="A flow version's funnel")
async def get_funnel(
    request: Request, bot_id: PathStr,
    flow: Annotated[str | None, QueryParameter(name="flow")] = None,
    version: Annotated[str | None, QueryParameter(name="version")] = None,
    start: Annotated[str | None, QueryParameter(name="from")] = None,
    end: Annotated[str | None, QueryParameter(name="to")] = None,
    compare: Annotated[str | None, QueryParameter(name="compare")] = None,
    format: Annotated[str | None, QueryParameter(name="format")] = None,  # noqa: A002 - the query's name
    language: Annotated[str | None, QueryParameter(name="language")] = None,
) -> Response:
    """Per state entered, left by each transition, ended by cancel / expiry / completion, median seconds;
    per transition fired. `compare=<n>` adds version n; `language=<code>` counts only the dialogs in that
    language; `format=csv` (or Accept: text/csv) gives CSV."""
    if format not in (None, "", "json", "csv"):
        raise BadRequest(f"format must be json or csv; got {format!r}.")
    bot = await bot_or_404(request, bot_id)
    flow_id = flow or bot.flow_id
    if not flow_id:
        raise BadRequest(f"Bot {bot_id!r} serves no flow yet; name one with ?flow=<id>.")
    number = _version("version", version)
    if number is None:
        if flow_id != bot.flow_id or bot.version is None:
            raise BadRequest("Name the version with ?version=<n>: the bot does not serve this flow.")
        number = bot.version
    other = _version("compare", compare)
    start_at, end_at, hours = period(start, end, time.time())
    runtime = runtime_of(request.app)
    reports = []
    for n in [number] + ([other] if other is not None else []):
        compiled = await runtime.catalog.flow(flow_id, n)
        if compiled is None:
            raise NotFound(f"Flow {flow_id!r} has no version {n}.")
        fields: dict[str, int] = {}
        for counted_as in _groups(compiled.languages, n, language):
            for field, value in (await store_read(runtime.store.funnel(bot_id, flow_id, counted_as, hours))).items():
                fields[field] = fields.get(field, 0) + value
        reports.append(report(compiled, n, fields))
    if format == "csv" or (format is None and "text/csv" in request.headers.get("accept", "")):
        name = f"funnel-{bot_id}-{flow_id}-v{number}" + (f"-vs-v{other}" if other else "") + ".csv"
        return Response(to_csv(reports), media_type=CSV_MEDIA_TYPE,
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})
    answer: dict[str, Any] = {"bot": bot_id, "flow": flow_id, "from": _iso(hours.start * HOUR),
                              "to": _iso(hours.stop * HOUR), "asked": {"from": _iso(start_at), "to": _iso(end_at)},
                              "duration_buckets": list(BUCKETS), **reports[0]}
    if other is not None:
        answer["compare"] = reports[1]
    if language:
        answer["language"] = language
    return Response(answer, media_type="application/json")


ROUTES = [get_funnel]
