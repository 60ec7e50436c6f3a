"""One dataset's lambda sweep: every (negative weights, lambda) of the config.

Learning rates are tried in order (100, then 10) until one neither diverges
(DivergenceError) nor oscillates (final cost > 1% above the best of its trace); every map is
kept with its 1-NN error (labels), trustworthiness (k = 10) and final cost. v+ and v- are built
once per dataset; v- is normalised to sum 1 (as smallvis does), so the pixel scale ([0, 1] in
our builders, 0-255 in some of smallvis's data) does not matter.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from embedlab.experiments.ee.settings import SweepSettings
from embedlab.optimize import DivergenceError

log = logging.getLogger(__name__)

#: epochs between progress lines (cost, gradient norm) in each fit's log
LOG_EVERY = 250

SWEEP_COLUMNS = [
    "dataset",
    "negative_weights",
    "lam",
    "learning_rate",
    "diverged_at",
    "n_iter",
    "cost",
    "nn1_error",
    "trustworthiness",
    "seconds",
]


OSCILLATION_MARGIN = 0.01  # final cost above the run's best by more than 1%: not settled


def oscillating(est, margin: float = OSCILLATION_MARGIN) -> bool:
    """True when the final cost is above the lowest cost of the run's trace by > ``margin``
    (relative): the step size is too large for the run to settle, though nothing diverged."""
    best = float(np.min(est.cost_trace_))
    return est.cost_ > best + margin * abs(best)


def fit_with_fallback(X, objective, learning_rates, **params):
    """Fit with each learning rate in turn until one neither diverges nor oscillates.

    Returns (estimator or None, learning rate used or None, "lr: reason" of each rejected
    rate). If every rate oscillates, the last oscillating fit is returned (and listed)."""
    from embedlab.methods.elastic import ElasticEmbedding

    failures, last = [], (None, None)
    for lr in learning_rates:
        est = ElasticEmbedding(learning_rate=lr, backoff=0, log_every=LOG_EVERY, **params)
        try:
            est.fit(X, objective=objective)
        except DivergenceError as error:
            log.warning("learning rate %g diverged: %s", lr, error)
            failures.append(f"{lr:g}: {str(error).splitlines()[0][:80]}")
            continue
        if not oscillating(est):
            return est, lr, failures
        log.warning(
            "learning rate %g oscillates: final cost %.6g, best %.6g",
            lr,
            est.cost_,
            np.min(est.cost_trace_),
        )
        failures.append(
            f"{lr:g}: oscillating (final cost {est.cost_:.4g} > best {np.min(est.cost_trace_):.4g})"
        )
        last = (est, lr)
    return last[0], last[1], failures


def sweep(
    X: np.ndarray, labels: np.ndarray | None, dataset: str, settings: SweepSettings
) -> tuple[pd.DataFrame, np.ndarray]:
    """Every (weights, lambda) of ``settings.lambdas``: the metrics table and the maps
    (runs x n x 2, NaN where every learning rate diverged)."""
    from embedlab.evaluate.knn import loo_1nn_error_rate, trustworthiness
    from embedlab.methods.elastic import elastic_costs

    objectives = elastic_costs(X, settings.perplexity)
    rows, maps = [], []
    for kind in ("distance", "uniform"):
        for lam in settings.lambdas.get(kind, []):
            started = time.perf_counter()
            est, lr, failures = fit_with_fallback(
                X,
                objectives[kind],
                settings.learning_rates,
                lam=float(lam),
                perplexity=settings.perplexity,
                negative_weights=kind,
                max_iter=settings.max_iter,
            )
            row = {
                "dataset": dataset,
                "negative_weights": kind,
                "lam": float(lam),
                "learning_rate": lr,
                "diverged_at": "; ".join(failures),
            }
            if est is None:
                maps.append(np.full((len(X), 2), np.nan))
            else:
                Y = est.embedding_
                maps.append(Y)
                row.update(
                    n_iter=est.n_iter_,
                    cost=est.cost_,
                    nn1_error=None if labels is None else loo_1nn_error_rate(Y, labels),
                    trustworthiness=trustworthiness(X, Y, 10),
                )
            row["seconds"] = time.perf_counter() - started
            log.info("%s %s lambda %g: %s", dataset, kind, lam, row)
            rows.append(row)
    return pd.DataFrame(rows).reindex(columns=SWEEP_COLUMNS), np.stack(maps)
