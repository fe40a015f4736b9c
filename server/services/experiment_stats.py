"""An experiment's statistics: Beta-Binomial posteriors with a uniform prior, per arm and compared."""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

METHOD = "probability to be best, Beta-Binomial, uniform prior"
LEVEL = 0.95
DRAWS = 200_000
SEED = 20261206  # fixed: the same counts always give the same probabilities, on every replica


def interval(started: int, reached: int) -> tuple[float, float]:
    """The 95% highest-density credible interval of the conversion under Beta(1 + reached, 1 + misses)."""
    misses = max(0, started - reached)
    posterior = stats.beta(1 + reached, 1 + misses)
    # At 0% or 100% the density is monotone, so its highest-density interval is one-sided; the
    # equal-tailed one would leave out the very rate that was observed.
    if reached == 0:
        return 0.0, float(posterior.ppf(LEVEL))
    if misses == 0:
        return float(posterior.ppf(1 - LEVEL)), 1.0
    low, high = posterior.ppf([(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(low), float(high)


def best(counts: list[tuple[int, int]]) -> list[float]:
    """Each arm's probability of having the highest conversion, by Monte Carlo from the posteriors."""
    rng = np.random.default_rng(SEED)
    draws = np.stack([stats.beta.rvs(1 + r, 1 + max(0, n - r), size=DRAWS, random_state=rng) for n, r in counts])
    wins = np.bincount(np.argmax(draws, axis=0), minlength=len(counts))
    return [float(w) / DRAWS for w in wins]


def summary(counts: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """Per arm (dialogs started, goal reached): conversion, its 95% interval, probability to be best."""
    chances = best(counts)
    out = []
    for (started, reached), chance in zip(counts, chances):
        low, high = interval(started, reached)
        out.append({"dialogs": started, "goal_reached": reached,
                    "conversion": reached / started if started else None,
                    "interval": [round(low, 6), round(high, 6)], "probability_best": round(chance, 6)})
    return out


def winner(arms: list[dict[str, Any]], confidence: float, min_dialogs: int) -> int | None:
    """The index of the arm auto-promotion picks now, or None: every arm has `min_dialogs` and one is best
    with at least `confidence`."""
    if any(a["dialogs"] < min_dialogs for a in arms):
        return None
    top = max(range(len(arms)), key=lambda i: arms[i]["probability_best"])
    return top if arms[top]["probability_best"] >= confidence else None
