"""The paper text's Fig. 2 protocol for one (dataset, method): k-fold cross validation over
the triplets for every embedding dimension; per fold the method is fitted on the training
triplets, its triplet generalisation error is measured on the held-out fold and its
leave-one-out 1-NN error on the item labels on that same (training-fold) embedding. The
figure's values are means over folds (:mod:`.fig2`).

A method with a parameter grid (the K forms' regulariser, CKL's mu) chooses its value per
dimension on held-out training triplets of the first fold and keeps it for all folds: one
validation per grid value (:func:`validation_errors`, a workflow job each), the choice from all
(:class:`Validation`), one fold's fits (:func:`paper_part`, a job each). K forms fit the kernel
once per (fold, parameter value) and read every dimension off it (:func:`fit_embeddings`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab.experiments.tste.protocol import (
    folds_and_grid,
    load_grid_files,
    load_triplets,
    make_estimator,
    merge_parts,
    metric_row,
)
from embedlab.experiments.tste.settings import KFormSolver, PaperTextSettings

log = logging.getLogger(__name__)


def fit_embeddings(
    method: str,
    dims: Iterable[int],
    triplets: np.ndarray,
    n: int,
    params: Mapping[str, Any],
    seed: int,
    max_iter: int,
) -> dict[int, tuple[np.ndarray, int, float]]:
    """dims -> (embedding, iterations, seconds) of ``method`` fitted on ``triplets``.

    X forms fit once per dimension. K forms optimise the whole n x n kernel, whatever the
    dimension (it only sets the rank of the initial K), so they fit once, initialised at the
    largest dimension, and each dimension's embedding is the classical-MDS truncation of that
    kernel (:func:`embedlab.methods.triplet_solvers.gram_embedding`), as in the paper's K forms.
    """
    from embedlab.methods.triplet_solvers import gram_embedding

    dims = sorted({int(d) for d in dims})
    if method.endswith("-K"):
        t0 = time.perf_counter()
        est = make_estimator(
            method, dims[-1], **params, max_iter=max_iter, random_state=seed, verbose=True
        )  # a kernel fit takes minutes at n = 1000: its cost every 100 iterations goes to the log
        est.fit(triplets, n=n)
        sec = (time.perf_counter() - t0) / len(dims)
        return {d: (gram_embedding(est.kernel_, d), int(est.n_iter_), sec) for d in dims}
    out = {}
    for d in dims:
        t0 = time.perf_counter()
        est = make_estimator(method, d, **params, max_iter=max_iter, random_state=seed)
        Y = est.fit(triplets, n=n).embedding_
        out[d] = (Y, int(est.n_iter_), time.perf_counter() - t0)
    return out


def validation_errors(
    method: str,
    name: str,
    value: Any,
    train: np.ndarray,
    n: int,
    *,
    settings: PaperTextSettings,
    val_fraction: float = 0.1,
) -> dict[int, float]:
    """dims -> triplet error (5 decimals) of one grid value of ``name`` at each of
    ``settings.dims``: fitted on ``train`` less a seeded ``val_fraction`` (``settings.seed``),
    measured on that held-out share, with the K forms' solver ``settings.kform_solver``. Each
    value is one workflow job (rule ``tste_search``); :meth:`Validation.choose` chooses from
    all."""
    from embedlab.evaluate.triplets import holdout_split, triplet_error

    fit_rows, val_rows = holdout_split(len(train), val_fraction, settings.seed)
    fit, val = train[fit_rows], train[val_rows]
    params = {**kform_settings(method, settings.kform_solver), name: value}
    fits = fit_embeddings(method, settings.dims, fit, n, params, settings.seed, settings.max_iter)
    return {d: round(triplet_error(Y, val), 5) for d, (Y, _, _) in fits.items()}


def validate(
    method: str,
    train: np.ndarray,
    n: int,
    *,
    settings: PaperTextSettings,
    val_fraction: float = 0.1,
) -> Validation | None:
    """The choice of the grid ``settings.grid`` (one parameter; None for an untuned method):
    :func:`validation_errors` of each value on ``train``, then :meth:`Validation.choose` (per
    dimension the value of lowest error, the first on ties)."""
    if not settings.grid:
        return None
    ((name, values),) = settings.grid.items()
    errors = [
        validation_errors(method, name, v, train, n, settings=settings, val_fraction=val_fraction)
        for v in values
    ]
    return Validation.choose(name, list(values), errors)


def choose_per_dimension(
    values: list, errors: list[Mapping[int, float]]
) -> tuple[dict[int, Any], dict[int, list[float]]]:
    """(dims -> the value with the lowest error, the first on ties; dims -> the errors of
    every value in grid order) from :func:`validation_errors` of each value, in grid order;
    every value must have been validated at the same dimensions."""
    if len(errors) != len(values) or not errors:
        raise ValueError(f"validation: {len(errors)} error sets for {len(values)} grid values")
    dims = list(errors[0])
    if any(sorted(e) != sorted(dims) for e in errors):
        raise ValueError(f"validation: grid values validated at different dims {dims}")
    by_dim = {d: [e[d] for e in errors] for d in dims}
    return {d: values[int(np.argmin(errs))] for d, errs in by_dim.items()}, by_dim


@dataclass
class Validation:
    """The paper text's choice of a method's one tuned parameter: per dimension the chosen
    value (``{}`` for an untuned method) and the validation errors of every grid value in
    grid order (``[]`` untuned); the rows of every fold carry both."""

    chosen: dict[int, dict[str, Any]]
    errors: dict[int, list[float]]

    @classmethod
    def choose(cls, name: str, values: list, errors: list[Mapping[int, float]]):
        """From :func:`validation_errors` of each value, in grid order."""
        best, by_dim = choose_per_dimension(values, errors)
        return cls({d: {name: v} for d, v in best.items()}, by_dim)

    @classmethod
    def untuned(cls, dims: Iterable[int]):
        """No parameter to choose: every dimension fits with the estimator's defaults."""
        return cls({d: {} for d in dims}, {d: [] for d in dims})


def kform_settings(method: str, kform_solver: KFormSolver | None) -> dict[str, Any]:
    """The estimator settings every fit of ``method`` shares: the K forms' solver settings
    (``tste.kform_solver``; None: the estimators' own); none for X forms."""
    if kform_solver is None or not method.endswith("-K"):
        return {}
    return dataclasses.asdict(kform_solver)


def validation_set(triplets: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """The triplets a grid value is validated on: the training triplets of the first fold of
    the seeded ``n_folds``-fold split (:func:`validation_errors` holds a share of them out)."""
    from embedlab.evaluate.triplets import kfold_triplets

    return triplets[kfold_triplets(len(triplets), n_folds, seed=seed)[0][0]]


def evaluate_method(
    artifact_dir: str | Path,
    method: str,
    dims: Iterable[int],
    n_folds: int,
    grid: Mapping[str, list] | None = None,
    *,
    seed: int,
    max_iter: int,
    max_triplets: int | None = None,
    folds_used: int | None = None,
    kform_solver: KFormSolver | None = None,
) -> pd.DataFrame:
    """One row per (dims, fold): generalisation error, 1-NN error, chosen parameter, time.

    ``grid`` holds at most one parameter name -> candidate values, chosen per dimension on
    held-out triplets of the first fold's training set and kept for every fold.
    ``folds_used`` evaluates only the first folds of the ``n_folds``-fold split (the same
    split, so its folds are a subset of a full run's); None = all. ``kform_solver``: the K
    forms' projected-gradient settings (None = the estimators' own), unused by X forms.

    The steps in one call, with the settings a workflow job of this (dataset, method) gets
    (:class:`~.settings.PaperTextSettings`, checked as a job's are): :func:`validate` (the
    validation of each grid value, then the choice), :func:`paper_part` for each fold and
    :func:`merge_parts`. The workflow runs the same steps as separate jobs (one per grid
    value, one per fold, the merge) and writes the same rows.
    """
    trip, n, _ = load_triplets(artifact_dir, max_triplets, seed)
    dims, folds, grid = folds_and_grid(method, len(trip), dims, n_folds, grid, seed, folds_used)
    job_settings = PaperTextSettings.from_mapping(
        {
            "dims": dims, "n_folds": n_folds, "seed": seed, "max_iter": max_iter,
            "kform_solver": kform_solver, "max_triplets": max_triplets, "grid": grid,
        },
        f"{method}: paper text settings",
    )  # fmt: skip
    train = validation_set(trip, n_folds, seed)
    validation = validate(method, train, n, settings=job_settings)
    if validation is not None:
        log.info(
            "%s: chosen %s, validation errors %s", method, validation.chosen, validation.errors
        )
    return merge_parts(
        paper_part(artifact_dir, method, k, validation, settings=job_settings)
        for k in range(len(folds))
    )


def paper_part(
    artifact_dir: str | Path,
    method: str,
    fold: int,
    validation: Validation | None,
    *,
    settings: PaperTextSettings,
) -> pd.DataFrame:
    """Metric rows of fold ``fold`` of the seeded ``settings.n_folds``-fold split for one
    (dataset, method) under the paper's text: per dimension of ``settings.dims`` a fit on the
    fold's training triplets (seed ``settings.seed`` + ``fold``, ``settings.max_iter``
    iterations, the K forms' solver ``settings.kform_solver``) with the value that
    ``validation`` chose (None: an untuned method), its triplet generalisation error on the
    fold's test triplets and its leave-one-out 1-NN error. Dimensions that share a chosen
    value share one K-form kernel fit (:func:`fit_embeddings`).
    """
    from embedlab.evaluate.knn import loo_1nn_error_rate
    from embedlab.evaluate.triplets import triplet_error

    seed, n_folds, max_iter = settings.seed, settings.n_folds, settings.max_iter
    trip, n, labels = load_triplets(artifact_dir, settings.max_triplets, seed)
    dims, folds, _ = folds_and_grid(method, len(trip), settings.dims, n_folds, {}, seed, None)
    if not 0 <= fold < n_folds:
        raise ValueError(f"{method}: fold must be in 0..{n_folds - 1}, got {fold}")
    validation = validation or Validation.untuned(dims)
    if missing := sorted(set(dims) - set(validation.chosen)):
        raise ValueError(f"{method}: the validation has no choice at dims {missing}")
    fixed = kform_settings(method, settings.kform_solver)
    dataset = Path(artifact_dir).name
    groups: dict[str, list[int]] = {}
    for d in dims:  # dimensions that share a parameter value share a K-form fit
        groups.setdefault(json.dumps(validation.chosen[d]), []).append(d)
    train, test = folds[fold]
    rows = []
    for key, group in groups.items():
        params = {**fixed, **json.loads(key)}
        fits = fit_embeddings(method, group, trip[train], n, params, seed + fold, max_iter)
        for d, (Y, n_iter, seconds) in fits.items():
            gen = triplet_error(Y, trip[test])
            nn = loo_1nn_error_rate(Y, labels)
            row = metric_row(
                dataset, method, d, fold, gen, nn, key, validation.errors[d], n_iter, seconds
            )
            rows.append(row)
    return pd.DataFrame(rows)


def load_validation(
    files: Iterable[str | Path], grid: Mapping[str, list] | None = None
) -> Validation | None:
    """The paper text's choice from the files of the search step (:func:`validation_errors`
    of each value), given in grid order (none: an untuned method); ``grid``: the configured
    grid the files must hold."""
    found = load_grid_files(files, "validation", grid)
    if found is None:
        return None
    name, values, loaded = found
    errors = [
        dict(zip(arrays["dims"].tolist(), arrays["errors"].tolist(), strict=True))
        for arrays, _ in loaded
    ]
    return Validation.choose(name, values, errors)
