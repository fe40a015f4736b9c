"""What the bot page's experiment panel shows: arms with shares and percentages, and the chart's geometry."""
from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from babel.numbers import format_decimal, format_percent

from web.i18n import current_language, human_datetime

# Arm colours (the chart's lines and the table's swatches): distinct also for the colour-blind.
COLOURS = ("#1f6feb", "#d4690b", "#2da44e", "#8250df")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 220, 48, 12, 12, 28


def percent(value: float | None, digits: int = 1) -> str:
    """0.1234 as "12.3%" (or "12,3 %") in the page's language; a dash when there is no value."""
    if value is None:
        return "—"
    return format_percent(value, format="#,##0." + "0" * digits + "%", locale=current_language())


def arms(experiment: dict[str, Any], titles: dict[str, str]) -> list[dict[str, Any]]:
    """The table's rows: version, colour, share of new dialogs, counts, conversion with its interval."""
    total = sum(a["weight"] for a in experiment["arms"]) or 1
    top = max((a.get("probability_best") or 0 for a in experiment["arms"]), default=0)
    rows = []
    for i, arm in enumerate(experiment["arms"]):
        low, high = arm.get("interval") or (None, None)
        chance = arm.get("probability_best")
        rows.append({"version": arm["version"], "weight": arm["weight"], "colour": COLOURS[i % len(COLOURS)],
                     "share": percent(arm["weight"] / total, 0), "dialogs": arm.get("dialogs", 0),
                     "reached": arm.get("goal_reached", 0), "conversion": percent(arm.get("conversion")),
                     "low": percent(low), "high": percent(high), "chance": percent(chance),
                     "chance_width": round(100 * (chance or 0), 1), "leading": bool(chance) and chance == top,
                     "title": titles.get(str(arm["version"]), "")})
    return rows


def chart(experiment: dict[str, Any]) -> dict[str, Any] | None:
    """Polylines of each arm's cumulative conversion over the chart's points, with axis ticks; None when empty."""
    points = experiment.get("chart") or []
    if not points or not any(a["dialogs"] for a in points[-1]["arms"]):
        return None
    rates = [[(a["goal_reached"] / a["dialogs"]) if a["dialogs"] else None for a in p["arms"]] for p in points]
    peak = max((r for row in rates for r in row if r is not None), default=0)
    grain = 0.2 if peak > 0.18 else 0.04  # quarter ticks at whole percentages: 5% or 1% steps
    ceiling = min(1.0, max(grain, math.ceil(peak * 1.1 / grain) * grain))
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = inner_w / max(1, len(points) - 1)

    def x(i: int) -> float:
        return round(LEFT + (i * step if len(points) > 1 else inner_w / 2), 1)

    def y(rate: float) -> float:
        return round(TOP + inner_h * (1 - rate / ceiling), 1)

    lines = []
    for arm_index, arm in enumerate(points[-1]["arms"]):
        coords = [(x(i), y(rate)) for i, row in enumerate(rates) if (rate := row[arm_index]) is not None]
        lines.append({"version": arm["version"], "colour": COLOURS[arm_index % len(COLOURS)],
                      "points": " ".join(f"{px},{py}" for px, py in coords), "dots": coords})
    ticks = [{"y": y(ceiling * k / 4), "label": percent(ceiling * k / 4, 0)} for k in range(5)]
    labels = []
    for i in sorted({0, len(points) - 1}):
        at = datetime.fromisoformat(points[i]["at"].replace("Z", "+00:00"))
        labels.append({"x": x(i), "label": human_datetime(at), "anchor": "start" if i == 0 else "end"})
    return {"width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP,
            "bottom": HEIGHT - BOTTOM, "lines": lines, "ticks": ticks, "labels": labels, "single": len(points) == 1}


def confidence(value: float | None) -> str:
    """The auto-promotion threshold as a percentage."""
    return percent(value, 0) if value is not None else "—"


def number(value: int) -> str:
    return format_decimal(value, locale=current_language())
