"""The Swiss roll: a fixed-lambda run against homotopy schedules at the same iteration
budget; unrolling = max over directions of |Spearman(projection, roll angle t)|."""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from embedlab.experiments.ee.settings import HomotopySettings
from embedlab.experiments.ee.sweep import LOG_EVERY

log = logging.getLogger(__name__)


def unrolling(Y: np.ndarray, t: np.ndarray, n_directions: int = 180) -> tuple[float, float]:
    """(max |Spearman rho|, angle in degrees) of the projection of Y on a direction with the
    roll angle t, over ``n_directions`` directions in [0, 180) degrees."""
    from scipy.stats import spearmanr

    angles = np.arange(n_directions) * (np.pi / n_directions)
    best, best_angle = 0.0, 0.0
    for a in angles:
        rho = spearmanr(Y[:, 0] * np.cos(a) + Y[:, 1] * np.sin(a), t).statistic
        if abs(rho) > best:
            best, best_angle = abs(float(rho)), float(np.degrees(a))
    return best, best_angle


def homotopy_comparison(
    X: np.ndarray, t: np.ndarray, settings: HomotopySettings
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Fixed lambda for ``settings.budget`` epochs vs the polytope and log-spaced homotopies,
    each stage given budget / n_stages epochs (tolerance stopping may use fewer). The fixed
    run is not stopped by the tolerance (it would stop near 1000 epochs with its pinches)."""
    from embedlab.evaluate.knn import trustworthiness
    from embedlab.methods.elastic import ElasticEmbedding, elastic_costs

    budget, steps = settings.budget, settings.logspace_steps
    common = dict(lam=settings.lam, homotopy_start=settings.start)
    objective = elastic_costs(X, settings.perplexity)["distance"]
    n_polytope = len(ElasticEmbedding(homotopy="polytope", **common).lambdas())
    variants = {
        "fixed": dict(max_iter=budget, min_iter=budget),  # no early stop: the whole budget
        "polytope": dict(homotopy="polytope", stage_iter=budget // n_polytope),
        "logspace": dict(homotopy="logspace", homotopy_steps=steps, stage_iter=budget // steps),
    }
    rows, maps = [], {}
    for name, extra in variants.items():
        started = time.perf_counter()
        est = ElasticEmbedding(
            perplexity=settings.perplexity,
            learning_rate=settings.learning_rate,
            log_every=LOG_EVERY,
            **common,
            **extra,
        ).fit(X, objective=objective)
        rho, angle = unrolling(est.embedding_, t)
        maps[name] = est.embedding_
        rows.append(
            {
                "schedule": name,
                "stages": len(est.lambdas_),
                "budget": budget,
                "n_iter": est.n_iter_,
                "cost": est.cost_,
                "spearman_t": rho,
                "axis_degrees": angle,
                "trustworthiness": trustworthiness(X, est.embedding_, 10),
                "seconds": time.perf_counter() - started,
            }
        )
        log.info("homotopy %s: %s", name, rows[-1])
    return pd.DataFrame(rows), maps
