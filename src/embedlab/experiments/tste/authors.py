"""The authors' released Fig. 2 protocol (STE_Release: mnist_experiment.m,
mnist_experiment2.m, music_experiment*.m and the solvers), for one (dataset, method).

The regulariser (GNMDS-K mu, STE-K lam, CKL mu) is searched on the first 10 % of the triplets
in generation order and judged by its violations on the other 90 %
(:func:`authors_search_value`, a workflow job each; :class:`AuthorsSearch`); the 1-NN error
comes from one fit per dimension on a training set of its own, the generalisation error from
each fold's fit, with ties counted as correct (:func:`authors_part`, a job each). The solver
settings are the code's (:data:`AUTHORS_CODE`); a reading may set the released solvers'
options that the scripts never pass (:class:`~.settings.SolverOptions`: the authors_figure
reading).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab.experiments.tste import protocol
from embedlab.experiments.tste.settings import AuthorsSettings, SolverOptions

log = logging.getLogger(__name__)

#: facts of the authors' code that are not configuration: solver step eta (the step is
#: eta n / #triplets times the gradient), iterations, the K forms' initial rank, the tie rule
AUTHORS_CODE: dict[str, Any] = {
    "learning_rate": {
        "GNMDS-K": 1.0,
        "GNMDS-X": 1.0,
        "STE-K": 1.0,
        "STE-X": 1.0,
        "t-STE-X": 2.0,
        "CKL-K": 1e-5,
        "CKL-X": 1e-5,
    },
    "max_iter": {"STE-K": 2000},  # every other method: 1000
    "default_max_iter": 1000,
    "min_iter": {"GNMDS-X": 50},  # gnmds_x.m runs at least 50 iterations
    "init_rank": 2,
    "kform": "released",  # the K forms' gradient, projection and records as coded
    "ties": "correct",  # a test triplet is an error only when d_ij > d_il
}

#: the options of the released solvers a reading may set, per method (:class:`SolverOptions`):
#: ``use_log`` (STE-X, STE-K, t-STE-X) and t-STE's ``alpha``
RELEASED_OPTIONS = {"STE-X": {"use_log"}, "STE-K": {"use_log"}, "t-STE-X": {"use_log", "alpha"}}


def released_options(
    method: str, options: SolverOptions | Mapping[str, Any] | None
) -> dict[str, Any]:
    """The estimator parameters that a reading's solver ``options`` set for ``method`` (a
    mapping is read as :meth:`SolverOptions.from_mapping`), checked against
    :data:`RELEASED_OPTIONS`."""
    given = SolverOptions.from_mapping(options, where=f"{method}: solver options").given()
    allowed = RELEASED_OPTIONS.get(method, set())
    if unknown := sorted(set(given) - allowed):
        raise ValueError(
            f"{method}: the released code has no option {unknown} (options: {sorted(allowed)})"
        )
    return given


def authors_params(
    method: str,
    values: Mapping[str, Any] | None = None,
    settings: SolverOptions | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Estimator parameters of ``method`` as the authors' code sets them, the searched value
    (GNMDS-K ``mu``, STE-K ``lam``, CKL ``mu``) mapped onto the coded objective:
    GNMDS-K (1 - mu) trace(K) + mu sum hinge; STE-K (1 - lam)(-log-likelihood) + lam
    trace(K); CKL-K without the unit diagonal; K forms start at rank 2 and run as coded
    (``kform="released"``); GNMDS-X runs at least 50 iterations. ``settings``: options of the
    released solvers that the reading sets (:func:`released_options`; none = the scripts'
    calls)."""
    values = dict(values or {})
    out: dict[str, Any] = {"learning_rate": AUTHORS_CODE["learning_rate"][method]}
    if method.endswith("-K"):
        out["init_rank"] = AUTHORS_CODE["init_rank"]
        out["kform"] = AUTHORS_CODE["kform"]
    if method in AUTHORS_CODE["min_iter"]:
        out["min_iter"] = AUTHORS_CODE["min_iter"][method]
    if method == "GNMDS-K":
        mu = float(values.pop("mu", 0.0))
        out.update(loss_weight=mu, lam=1.0 - mu)
    elif method == "STE-K":
        lam = float(values.pop("lam", 0.0))
        out.update(loss_weight=1.0 - lam, lam=lam)
    elif method == "CKL-K":
        out.update(mu=float(values.pop("mu", 0.05)), unit_diagonal=False)
    elif method == "CKL-X":
        out["mu"] = float(values.pop("mu", 0.05))
    if values:
        raise ValueError(f"{method}: the authors' protocol searches no {sorted(values)}")
    out.update(released_options(method, settings))
    return out


def authors_max_iter(method: str, max_iter: int | None) -> int:
    """The coded iteration limit of ``method`` unless ``max_iter`` overrides it."""
    if max_iter is not None:
        return int(max_iter)
    return int(AUTHORS_CODE["max_iter"].get(method, AUTHORS_CODE["default_max_iter"]))


def authors_fit(
    method: str,
    dims: Iterable[int],
    triplets: np.ndarray,
    n: int,
    values: Mapping[str, Any] | None,
    seed: int,
    max_iter: int | None,
    allow_self: bool,
    settings: SolverOptions | Mapping[str, Any] | None = None,
) -> tuple[dict[int, tuple[np.ndarray, int, float]], np.ndarray | None]:
    """(dims -> (embedding, iterations, seconds), kernel or None) of ``method`` fitted as the
    authors' code does: K forms learn one kernel (rank-2 start) and read every dimension off
    it by its top eigenvectors scaled by sqrt(eigenvalue), uncentred; X forms fit per
    dimension, t-STE with alpha = dims - 1 unless ``settings`` (the reading's solver options,
    :func:`released_options`) set it."""
    from embedlab.methods.triplet_solvers import gram_embedding

    dims = sorted({int(d) for d in dims})
    params = authors_params(method, values, settings)
    iters = authors_max_iter(method, max_iter)
    if method.endswith("-K"):
        t0 = time.perf_counter()
        est = protocol.make_estimator(
            method, dims[-1], **params, max_iter=iters, random_state=seed, verbose=True
        )
        est.fit(triplets, n=n, allow_self=allow_self)
        sec = (time.perf_counter() - t0) / len(dims)
        K = est.kernel_
        return {d: (gram_embedding(K, d, centre=False), int(est.n_iter_), sec) for d in dims}, K
    out = {}
    for d in dims:
        t0 = time.perf_counter()
        est = protocol.make_estimator(method, d, **params, max_iter=iters, random_state=seed)
        Y = est.fit(triplets, n=n, allow_self=allow_self).embedding_
        out[d] = (Y, int(est.n_iter_), time.perf_counter() - t0)
    return out, None


def search_split(m: int, n_folds: int) -> int:
    """Size of the authors' search training set: the first round(m / n_folds) triplets in
    generation order (10 % for 10 folds); the rest is the validation set."""
    first = int(np.floor(m / n_folds + 0.5))
    if not 1 <= first < m:
        raise ValueError(f"search split: {m} triplets / {n_folds} folds leaves an empty side")
    return first


def authors_search_value(
    method: str,
    name: str,
    value: Any,
    triplets: np.ndarray,
    n: int,
    allow_self: bool,
    *,
    settings: AuthorsSettings,
) -> tuple[int, np.ndarray | None]:
    """One value of the authors' regulariser search: fit on the first 10 % of the triplets in
    generation order (:func:`search_split` of ``settings.n_folds``), count violations
    (d_ij > d_il) on the other 90 % in the learned kernel (K forms) or in X X^T of a fit at
    the largest of ``settings.dims`` (CKL-X), the fit seeded by ``settings.seed`` with
    ``settings.max_iter`` iterations and the reading's solver options ``settings.solver``.
    Returns (violations, the kernel's embedding at the largest dimension for K forms -- the
    1-NN fits reuse it -- else None)."""
    from embedlab.evaluate.triplets import triplet_error
    from embedlab.methods.triplet_solvers import gram_embedding

    first = search_split(len(triplets), settings.n_folds)
    fit, val = triplets[:first], triplets[first:]
    top = max(settings.dims)
    fits, K = authors_fit(
        method, [top], fit, n, {name: value}, settings.seed, settings.max_iter, allow_self,
        settings.solver,
    )  # fmt: skip
    Z, gram = (K, True) if K is not None else (fits[top][0], False)
    err = triplet_error(Z, val, allow_self=allow_self, ties=AUTHORS_CODE["ties"], gram=gram)
    Y = None if K is None else gram_embedding(K, top, centre=False)
    return int(round(err * len(val))), Y


@dataclass
class AuthorsSearch:
    """The outcome of the authors' search: the chosen value (``{}`` for an untuned method),
    the violations of every grid value, and for K forms the chosen kernel's embedding at the
    largest dimension (its first d columns are the d-dimensional embedding)."""

    chosen: dict[str, Any]
    violations: list[int]
    embedding: np.ndarray | None

    @classmethod
    def choose(cls, name: str, values: list, results: list[tuple[int, np.ndarray | None]]):
        """Fewest violations wins, the first value on ties (the authors' min)."""
        violations = [v for v, _ in results]
        k = int(np.argmin(violations))
        return cls({name: values[k]}, violations, results[k][1])


def authors_search(
    method: str, triplets: np.ndarray, n: int, allow_self: bool, *, settings: AuthorsSettings
) -> AuthorsSearch | None:
    """The authors' search of the grid ``settings.grid`` (one parameter; None for an untuned
    method): :func:`authors_search_value` of every value, then the choice."""
    if not settings.grid:
        return None
    ((name, values),) = settings.grid.items()
    results = [
        authors_search_value(method, name, v, triplets, n, allow_self, settings=settings)
        for v in values
    ]
    return AuthorsSearch.choose(name, list(values), results)


def authors_part(
    artifact_dir: str | Path,
    method: str,
    part: int,
    search: AuthorsSearch | None,
    *,
    settings: AuthorsSettings,
) -> pd.DataFrame:
    """Metric rows of one part of the authors' Fig. 2 protocol for one (dataset, method),
    given the search's outcome (None: untuned), at each of ``settings.dims``, on the seeded
    subset of ``settings.max_triplets`` (None: all), with ``settings.max_iter`` iterations
    (None: as coded) and the reading's solver options ``settings.solver``:

    * ``part = -1``, 1-NN error: one fit per dimension on the first 10 % of the triplets in
      generation order (``settings.nn_training="first"``, MNIST; K forms reuse the search's
      kernel) or on all triplets (``"all"``, the music script); rows with ``fold = -1``;
    * ``part = k``, generalisation error of fold k of ``settings.n_folds`` (a permutation
      seeded by ``settings.seed``), trained on the other folds (seed + k): the fraction of
      test triplets with d_ij > d_il (ties correct).

    Every row also holds ``tied_fraction``: the share of its triplets (test triplets; for the
    1-NN rows the fit's training triplets) with d_ij = d_il, which the ties-correct error
    counts as satisfied -- near 1 for a collapsed fit (:func:`.fig2.degenerate_fits`).
    """
    from embedlab.evaluate.knn import loo_1nn_error_rate
    from embedlab.evaluate.triplets import tied_fraction, triplet_error

    seed, n_folds, nn_training = settings.seed, settings.n_folds, settings.nn_training
    max_iter, solver = settings.max_iter, settings.solver
    trip, n, labels, allow_self = protocol.load_triplets(
        artifact_dir, settings.max_triplets, seed, True
    )
    if nn_training not in ("first", "all"):
        raise ValueError(f"{method}: nn_training must be 'first' or 'all', got {nn_training!r}")
    dims, folds, _ = protocol.folds_and_grid(
        method, len(trip), settings.dims, n_folds, {}, seed, None
    )
    if not -1 <= part < n_folds:
        raise ValueError(f"{method}: part must be -1 (1-NN) or a fold in 0..{n_folds - 1}")
    dataset = Path(artifact_dir).name
    search = search or AuthorsSearch({}, [], None)
    key = json.dumps(search.chosen)
    rows: list[dict[str, Any]] = []

    def add(d, fold, gen, nn, n_iter, seconds, tied):
        row = protocol.metric_row(
            dataset, method, d, fold, gen, nn, key, search.violations, n_iter, seconds
        )
        rows.append({**row, "tied_fraction": round(tied, 6)})

    if part == -1:
        nn_trip = trip[: search_split(len(trip), n_folds)] if nn_training == "first" else trip
        if search.embedding is not None and nn_training == "first":  # the search fitted it
            nn_fits = {d: (search.embedding[:, :d], -1, 0.0) for d in dims}
        else:
            nn_fits, _ = authors_fit(
                method, dims, nn_trip, n, search.chosen, seed, max_iter, allow_self, solver
            )
        for d, (Y, n_iter, seconds) in nn_fits.items():
            tied = tied_fraction(Y, nn_trip, allow_self=allow_self)
            add(d, -1, np.nan, loo_1nn_error_rate(Y, labels), n_iter, seconds, tied)
    else:
        train, test = folds[part]
        fits, _ = authors_fit(
            method, dims, trip[train], n, search.chosen, seed + part, max_iter, allow_self,
            solver,
        )  # fmt: skip
        for d, (Y, n_iter, seconds) in fits.items():
            gen = triplet_error(Y, trip[test], allow_self=allow_self, ties=AUTHORS_CODE["ties"])
            tied = tied_fraction(Y, trip[test], allow_self=allow_self)
            add(d, part, gen, np.nan, n_iter, seconds, tied)
    return pd.DataFrame(rows)


def evaluate_authors(
    artifact_dir: str | Path,
    method: str,
    dims: Iterable[int],
    n_folds: int,
    grid: Mapping[str, list] | None = None,
    seed: int = 0,
    max_iter: int | None = None,
    max_triplets: int | None = None,
    nn_training: str = "first",
    folds_used: int | None = None,
    settings: SolverOptions | Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The authors' Fig. 2 protocol for one (dataset, method) in one call, with the settings
    a workflow job of this (dataset, method) gets (:class:`~.settings.AuthorsSettings`,
    checked as a job's are): the search (``grid``, one parameter; :func:`authors_search`),
    then :func:`authors_part` for the 1-NN fits and each of the first ``folds_used`` folds;
    ``settings``: the reading's solver options (:func:`released_options`). The workflow runs
    the same steps as separate jobs (one per grid value, one per part)."""
    trip, n, _, allow_self = protocol.load_triplets(artifact_dir, max_triplets, seed, True)
    dims, folds, grid = protocol.folds_and_grid(
        method, len(trip), dims, n_folds, grid, seed, folds_used
    )
    job_settings = AuthorsSettings.from_mapping(
        {
            "dims": dims, "n_folds": n_folds, "seed": seed, "max_iter": max_iter,
            "max_triplets": max_triplets, "grid": grid, "nn_training": nn_training,
            "solver": settings,
        },
        f"{method}: authors' settings",
    )  # fmt: skip
    search = authors_search(method, trip, n, allow_self, settings=job_settings)
    if search is not None:
        log.info("%s: chosen %s, violations %s", method, search.chosen, search.violations)
    parts = [
        authors_part(artifact_dir, method, k, search, settings=job_settings)
        for k in range(-1, len(folds))
    ]
    return protocol.merge_parts(parts)


def load_search(
    files: Iterable[str | Path], grid: Mapping[str, list] | None = None
) -> AuthorsSearch | None:
    """The search's outcome from the files of the search step (:func:`authors_search_value` of
    each value), given in grid order (none: an untuned method); ``grid``: the configured grid
    the files must hold."""
    found = protocol.load_grid_files(files, "search", grid)
    if found is None:
        return None
    name, values, loaded = found
    results = [
        (int(info["violations"]), arrays["embedding"] if arrays["embedding"].size else None)
        for arrays, info in loaded
    ]
    return AuthorsSearch.choose(name, values, results)
