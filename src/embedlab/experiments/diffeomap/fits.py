"""Diffeomap fits of one dataset over (sigma_rel, lam) points, and the choice of the best.

``sigma = sigma_rel * rms_radius`` with ``rms_radius = sqrt(mean_j ||x_j - mean||^2)`` of the
data as fitted, so one grid suits datasets of any scale. For every run both maps are kept:
``flow`` (``transform(X)``, the learned flow integrated from X: the map, whose errors are
reported and select runs) and ``phi`` (the optimised end points Phi_p). Under the span
formulation (the default) they are the same; under "charged" the end points are not reached
by the learned field, so they are not a map and only shown beside it.

A fit file (:func:`fit_grid`, saved by the ``fit`` step) holds ``flow_<k>`` and ``phi_<k>``
for each point k of the grid (:func:`embedlab.runs.grid_points` order), ``rows`` (the
artifact's rows fitted), ``classes`` where there are classes, and the info ``{"meta",
"runs"}``: one row per point, ``error`` non-empty where the fit failed.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from embedlab import runs
from embedlab.experiments.diffeomap.data import prepare
from embedlab.experiments.diffeomap.scoring import class_errors
from embedlab.experiments.diffeomap.settings import FitSettings

log = logging.getLogger(__name__)

#: the errors of a fit that diverged or met a singular system: recorded in its row, not raised
FIT_ERRORS = (FloatingPointError, np.linalg.LinAlgError, RuntimeError)


def rms_radius(X: np.ndarray) -> float:
    """sqrt(mean_j ||x_j - mean||^2): the scale sigma_rel is relative to."""
    return float(np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))


def estimator_params(settings: FitSettings) -> dict[str, Any]:
    """The stage's keyword arguments of :class:`embedlab.methods.diffeomap.Diffeomap` (and
    the ``settings`` of a fit file's meta)."""
    return {
        "p": settings.p,
        "n_basis": settings.n_basis,
        "max_iter": settings.max_iter,
        "eps": settings.eps,
        "optimizer": settings.optimizer,
        "formulation": settings.formulation,
    }


def fit_point(X, classes, sigma_rel, lam, params: dict, seed: int) -> tuple[dict, dict]:
    """One Diffeomap fit: (row of the runs table, {"phi": Phi_p map, "flow": transform(X)};
    {} where the fit failed with one of :data:`FIT_ERRORS`, named in the row's ``error``)."""
    from embedlab.methods.diffeomap import Diffeomap

    sigma = sigma_rel * rms_radius(X)
    est = Diffeomap(n_components=2, sigma=sigma, lam=lam, random_state=seed, **params)
    row: dict[str, Any] = {"sigma_rel": sigma_rel, "lam": lam, "sigma": sigma, **params}
    t0 = time.perf_counter()
    try:
        est.fit(X)
        maps = {"phi": est.embedding_, "flow": est.transform(X)}
    except FIT_ERRORS as exc:
        log.warning("sigma_rel=%g lam=%g failed: %s", sigma_rel, lam, exc)
        row.update(seconds=time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}")
        return row, {}
    row.update(
        seconds=round(time.perf_counter() - t0, 2),
        n_basis=len(est.basis_),  # what was used ("all": every point, or every distinct one)
        energy=est.energy_,
        kinetic=est.kinetic_energy_,
        off_subspace=est.off_subspace_energy_,
        n_iter=est.n_iter_,
        n_evaluations=est.n_evaluations_,
        optimizer_message=est.optimizer_message_,
        flow_gap_rms=float(np.sqrt(np.mean(np.sum((maps["phi"] - maps["flow"]) ** 2, 1)))),
        error="",
    )
    for name, Y in maps.items():
        row[f"errors_{name}"], row["n_labelled"] = class_errors(Y, classes)
    log.info("sigma_rel=%g lam=%g: %s", sigma_rel, lam, row)
    return row, maps


def fit_grid(
    artifact_dir: str | Path,
    grid: dict,
    settings: FitSettings,
    *,
    dataset: str,
    stage: str,
    point: int | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, info) of a fit file: every (sigma_rel, lam) of ``grid`` fitted at the
    settings of ``stage`` (grid, final or full_set, named in the meta).

    ``point`` k: only the k-th point of ``grid`` (0-based), a point file: its one run, its maps
    under index k and ``meta["point"]`` = k, for :func:`.gather.gather`. Every point's fit
    starts from the same seed, so the points' files joined equal the whole grid's file.
    """
    preparation = settings.preparation
    X, classes, info = prepare(artifact_dir, preparation, settings.seed)
    points = runs.grid_points(grid)
    if classes is None and len(points) > 1:
        raise ValueError(f"{artifact_dir}: no class labels to choose among {len(points)} points")
    if point is not None and not 0 <= point < len(points):
        raise ValueError(f"point {point} of a grid of {len(points)}: 0 to {len(points) - 1}")
    params = estimator_params(settings)
    arrays, table = {}, []
    for k, values in enumerate(points):
        if point is not None and k != point:
            continue
        row, maps = fit_point(X, classes, values["sigma_rel"], values["lam"], params, settings.seed)
        table.append(row)
        for name, Y in maps.items():
            arrays[f"{name}_{k}"] = Y
    meta = {
        "experiment": "diffeomap",
        "dataset": dataset,
        "stage": stage,
        "grid": grid,
        "settings": params,
        "seed": settings.seed,
        "subsample": preparation.subsample,
        "pca_dims": preparation.pca_dims,
        "top_authors": preparation.top_authors,
        "centre_frames": preparation.centre_frames,
        **{k: v for k, v in info.items() if k != "rows"},
        **({} if point is None else {"point": point}),
    }
    arrays["rows"] = np.asarray(info["rows"], dtype=np.int64)
    if classes is not None:
        arrays["classes"] = classes
    return arrays, {"meta": meta, "runs": table}


def load(path) -> dict[str, Any]:
    """{"meta", "runs", "arrays"} of a fit file or a baselines file."""
    arrays, info = runs.load_npz(path)
    return {**info, "arrays": arrays}


def best_index(runs_table: list[dict]) -> int:
    """Index of the run with the fewest errors in its flow (or the only successful run)."""
    ok = [k for k, r in enumerate(runs_table) if not r["error"]]
    if not ok:
        raise RuntimeError(f"every Diffeomap run failed; first: {runs_table[0]['error']}")
    return min(ok, key=lambda k: runs_table[k].get("errors_flow") or 0)


def select(fit_file: str | Path) -> dict[str, list[float]]:
    """The one-point grid of the run of ``fit_file`` with the fewest 1-NN errors in its flow
    (or the only successful run of a single-point grid): the stage-1 choice."""
    table = load(fit_file)["runs"]
    ok = [r for r in table if not r["error"]]
    if len(ok) > 1:
        ok = [r for r in ok if r.get("errors_flow") is not None]
    if not ok:
        raise ValueError(f"{fit_file}: no successful run (with class labels) to select from")
    best = min(ok, key=lambda r: (r.get("errors_flow") or 0, r.get("errors_phi") or 0))
    return {"sigma_rel": [best["sigma_rel"]], "lam": [best["lam"]]}
