"""Elastic Embedding (smallvis notes on EE): lambda sweeps and the homotopy method.

* ``ee-sweep``: one dataset, every (negative weights, lambda) of the config; learning rates
  are tried in order (100, then 10) until one neither diverges (DivergenceError) nor
  oscillates (final cost > 1% above the best of its trace); every map
  is kept (npz) with its 1-NN error (labels), trustworthiness (k = 10) and final cost (csv).
  v+ and v- are built once per dataset. v- is normalised to sum 1 (as smallvis does), so the
  pixel scale ([0, 1] in our builders, 0-255 in some of smallvis's data) does not matter.
* ``ee-table``: the per-dataset csv files into results/tables/ee_sweep.{csv,md}.
* ``ee-figure``: the lambda grid of one dataset (rows: distance / uniform weights).
* ``ee-homotopy``: Swiss roll, a fixed-lambda run against homotopy schedules at the same
  iteration budget; unrolling = max over directions of |Spearman(projection, roll angle t)|.
"""

from __future__ import annotations

import argparse
import json
import logging
import time

import numpy as np
import pandas as pd

from embedlab import artifacts, runs, tables
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
        est = ElasticEmbedding(learning_rate=lr, log_every=LOG_EVERY, **params)
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
    X, labels, dataset: str, lambdas: dict, perplexity: float, learning_rates, max_iter: int
) -> tuple[pd.DataFrame, np.ndarray]:
    """Every (weights, lambda): metrics table and the maps (runs x n x 2, NaN if all diverged)."""
    from embedlab.evaluate.knn import loo_1nn_error_rate, trustworthiness
    from embedlab.methods.elastic import elastic_costs

    objectives = elastic_costs(X, perplexity)
    rows, maps = [], []
    for kind in ("distance", "uniform"):
        for lam in lambdas.get(kind, []):
            started = time.perf_counter()
            est, lr, failures = fit_with_fallback(
                X,
                objectives[kind],
                learning_rates,
                lam=float(lam),
                perplexity=perplexity,
                negative_weights=kind,
                max_iter=max_iter,
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


def homotopy_comparison(
    X,
    t,
    lam: float,
    perplexity: float,
    budget: int,
    learning_rate: float,
    start: float = 1e-4,
    logspace_steps: int = 50,
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Fixed lambda for ``budget`` epochs vs the polytope and log-spaced homotopies, each
    stage given budget / n_stages epochs (tolerance stopping may use fewer). The fixed run
    is not stopped by the tolerance (it would stop near 1000 epochs with its pinches)."""
    from embedlab.evaluate.knn import trustworthiness
    from embedlab.methods.elastic import ElasticEmbedding, elastic_costs

    objective = elastic_costs(X, perplexity)["distance"]
    n_polytope = len(ElasticEmbedding(lam=lam, homotopy="polytope", homotopy_start=start).lambdas())
    variants = {
        "fixed": dict(max_iter=budget, min_iter=budget),  # no early stop: the whole budget
        "polytope": dict(homotopy="polytope", stage_iter=budget // n_polytope),
        "logspace": dict(
            homotopy="logspace", homotopy_steps=logspace_steps, stage_iter=budget // logspace_steps
        ),
    }
    rows, maps = [], {}
    for name, extra in variants.items():
        started = time.perf_counter()
        est = ElasticEmbedding(
            lam=lam,
            perplexity=perplexity,
            learning_rate=learning_rate,
            homotopy_start=start,
            log_every=LOG_EVERY,
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


# --------------------------------------------------------------------------------------
# command line


def _load_vectors(folder):
    art = artifacts.load(folder)
    if art.kind != "vectors":
        raise ValueError(f"{folder}: expected a vectors artifact, got {art.kind!r}")
    return art


def _cmd_sweep(args):
    art = _load_vectors(args.artifact)
    lambdas = json.loads(args.lambdas)
    table, maps = sweep(
        art.arrays["X"],
        art.arrays.get("labels"),
        args.dataset,
        lambdas,
        args.perplexity,
        args.learning_rates,
        args.max_iter,
    )
    tables.write_csv(table, args.csv, measured=["seconds"])
    arrays = {
        "maps": maps,
        "kinds": table["negative_weights"].to_numpy(str),
        "lambdas": table["lam"].to_numpy(float),
    }
    settings = {"perplexity": args.perplexity, "max_iter": args.max_iter}
    runs.save_npz(args.out, arrays, {"meta": {"dataset": args.dataset, **settings}})


def _cmd_table(args):
    table = pd.concat([pd.read_csv(f) for f in args.csvs], ignore_index=True)
    tables.write_table(
        table,
        args.csv,
        args.md,
        measured=["seconds"],
        title="Elastic Embedding: lambda sweep (1-NN error, trustworthiness k=10)",
        after=tables.left_out_note(args.left_out),
    )


def _cmd_figure(args):
    from embedlab.plots.common import save_figure
    from embedlab.plots.ee import sweep_figure

    art = _load_vectors(args.artifact)
    maps = runs.load_npz(args.runs)[0]["maps"]
    table = pd.read_csv(args.csv)
    colour = art.arrays.get("t", art.arrays.get("labels"))
    save_figure(sweep_figure(maps, table, colour, args.dataset), args.out, tight=True)


def _cmd_homotopy(args):
    from embedlab.plots.common import save_figure
    from embedlab.plots.ee import homotopy_figure

    art = _load_vectors(args.artifact)
    t = art.arrays["t"]
    table, maps = homotopy_comparison(
        art.arrays["X"],
        t,
        args.lam,
        args.perplexity,
        args.budget,
        args.learning_rate,
        args.start,
        args.logspace_steps,
    )
    tables.write_table(
        table,
        args.csv,
        args.md,
        measured=["seconds"],
        title="Elastic Embedding on the Swiss roll: homotopy vs fixed lambda",
    )
    save_figure(homotopy_figure(maps, table, t), args.out, tight=True)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``ee-*`` verbs to the command line."""
    p = sub.add_parser("ee-sweep", help="EE lambda sweep on one vectors dataset")
    p.add_argument("--artifact", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--lambdas", required=True, help='JSON {"distance": [...], "uniform": [...]}')
    p.add_argument("--perplexity", type=float, required=True)
    p.add_argument("--learning-rates", type=float, nargs="+", required=True)
    p.add_argument("--max-iter", type=int, required=True)
    p.add_argument("--out", required=True, help="maps (.npz)")
    p.add_argument("--csv", required=True, help="metrics of this dataset (.csv)")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("ee-table", help="EE sweep metrics of all datasets in one table")
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("csvs", nargs="+")
    p.add_argument("--left-out", required=True, help=tables.LEFT_OUT_HELP)
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser("ee-figure", help="EE lambda grid of one dataset (png + pdf)")
    p.add_argument("--artifact", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--runs", required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--out", required=True, help="output path without extension")
    p.set_defaults(func=_cmd_figure)

    p = sub.add_parser("ee-homotopy", help="Swiss roll: homotopy vs fixed lambda, same budget")
    p.add_argument("--artifact", required=True)
    p.add_argument("--lam", type=float, required=True)
    p.add_argument("--perplexity", type=float, required=True)
    p.add_argument("--budget", type=int, required=True)
    p.add_argument("--learning-rate", type=float, required=True)
    p.add_argument("--start", type=float, required=True)
    p.add_argument("--logspace-steps", type=int, required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--out", required=True, help="figure path without extension")
    p.set_defaults(func=_cmd_homotopy)
