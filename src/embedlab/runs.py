"""Repeated runs of an estimator: restarts x parameter grid, every run kept, the best chosen.

The papers report the best of many runs (SNEST Table 1: the minimum KL over restarts and
learning rates). :func:`run_grid` fits one estimator per (grid point, restart), keeps each run's
coordinates, cost trace, final cost and wall time, and :func:`save_runs` writes them all to one
``.npz`` with a JSON table of the runs, so that a table can be recomputed and any run plotted
without re-running it. :func:`save_npz` / :func:`load_npz` are the one way every paper saves
fitted runs and maps (arrays + a JSON ``info``, atomically).
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from embedlab import __version__, artifacts

log = logging.getLogger(__name__)


@dataclass
class Run:
    """One fitted run."""

    params: dict[str, Any]
    seed: int
    embedding: np.ndarray
    cost: float
    cost_trace: np.ndarray
    n_iter: int
    seconds: float
    error: str = ""  # non-empty when the run diverged (cost is then inf)
    extra: dict[str, Any] = field(default_factory=dict)


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of a parameter grid, as a list of dicts (sorted keys)."""
    keys = sorted(grid)
    return [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*(grid[k] for k in keys))
    ]


def run_grid(
    make_estimator: Callable[..., Any],
    data: Any,
    grid: Mapping[str, Sequence[Any]],
    n_restarts: int,
    seed: int = 0,
    cost_attr: str = "kl_divergence_",
    catch: tuple[type[BaseException], ...] = (),
    reference: bool = False,
) -> list[Run]:
    """Fit ``make_estimator(random_state=s, **point).fit(data)`` for every grid point and restart.

    Seeds are ``seed + r`` for restart r, the same for every grid point, so grid points are
    compared on the same initialisations. Exceptions of the types in ``catch`` (e.g. a
    divergence at a too-large learning rate) are recorded as failed runs with cost = inf;
    any other exception propagates. ``reference``: pass each fit the cost of the best run so
    far (``fit(data, reference_cost=...)``), against which the estimator may abandon a losing
    run; the estimator's ``stop_`` is then kept in the runs table.
    """
    if n_restarts < 1:
        raise ValueError(f"n_restarts must be >= 1, got {n_restarts}")
    runs: list[Run] = []
    for point in grid_points(grid):
        for r in range(n_restarts):
            s = seed + r
            t0 = time.perf_counter()
            fit_kw = {}
            if reference:
                costs = [run.cost for run in runs if np.isfinite(run.cost)]
                fit_kw["reference_cost"] = min(costs) if costs else None
            try:
                est = make_estimator(random_state=s, **point).fit(data, **fit_kw)
            except catch as exc:
                runs.append(
                    Run(
                        point,
                        s,
                        np.empty((0, 0)),
                        np.inf,
                        np.empty(0),
                        0,
                        time.perf_counter() - t0,
                        error=f"{type(exc).__name__}: {exc}",
                        extra={"stop": "diverged"} if reference else {},
                    )
                )
                log.warning("run %s seed %d failed: %s", point, s, exc)
                continue
            run = Run(
                params=point,
                seed=s,
                embedding=np.asarray(est.embedding_, dtype=np.float64),
                cost=float(getattr(est, cost_attr)),
                cost_trace=np.asarray(getattr(est, "cost_trace_", []), dtype=np.float64),
                n_iter=int(getattr(est, "n_iter_", 0)),
                seconds=time.perf_counter() - t0,
                extra={"stop": est.stop_} if reference else {},
            )
            if getattr(est, "backoffs_", 0):  # restarted at halved rates: say so and where
                run.extra["backoffs"] = int(est.backoffs_)
                run.extra["learning_rate_used"] = float(est.learning_rate_)
            runs.append(run)
            log.info(
                "run %s seed %d: cost %.6g after %d epochs in %.2fs",
                point,
                s,
                run.cost,
                run.n_iter,
                run.seconds,
            )
    return runs


def finished(runs: Sequence[Run]) -> list[Run]:
    """The runs that did not fail (a finite cost)."""
    return [r for r in runs if np.isfinite(r.cost)]


def best_run(runs: Sequence[Run]) -> Run:
    """The run with the lowest finite cost (raises if every run failed)."""
    ok = finished(runs)
    if not ok:
        first = runs[0]
        raise RuntimeError(
            f"all {len(runs)} runs failed; the first ({first.params}, seed {first.seed}): "
            f"{first.error}"
        )
    return min(ok, key=lambda r: r.cost)


def runs_table(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One JSON-able row per run: parameters, seed, cost, epochs, seconds, error."""
    return [
        {
            **r.params,
            "seed": r.seed,
            "cost": r.cost if np.isfinite(r.cost) else None,
            "n_iter": r.n_iter,
            "seconds": round(r.seconds, 4),
            "error": r.error,
            **r.extra,
        }
        for r in runs
    ]


def save_npz(path: str | Path, arrays: Mapping[str, Any], info: Mapping[str, Any]) -> Path:
    """Write ``arrays`` (sparse matrices as their CSR parts, :func:`artifacts.flatten_arrays`)
    and the JSON ``info`` (plus the package version) to ``path`` (.npz), atomically: every
    paper's fitted runs and maps are saved this way."""
    info = {**info, "embedlab_version": __version__}
    payload = {
        **artifacts.flatten_arrays(arrays),
        "info": np.asarray(json.dumps(info, default=_plain)),
    }
    return artifacts.atomic_write(path, lambda tmp: artifacts.write_npz(tmp, payload))


def load_npz(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(arrays, info) of a file written by :func:`save_npz` (sparse matrices as CSR)."""
    with np.load(path, allow_pickle=False) as npz:
        arrays = artifacts.unflatten_arrays({k: npz[k] for k in npz.files if k != "info"})
        return arrays, json.loads(str(npz["info"]))


def _plain(value):
    """JSON for numpy scalars and arrays inside ``info``."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def save_runs(path: str | Path, runs: Sequence[Run], meta: Mapping[str, Any]) -> Path:
    """Write every run to ``path`` (.npz): ``embedding_<k>``, ``trace_<k>``, ``best`` and a
    JSON ``runs`` table + ``meta`` (method, dataset, settings; :func:`save_npz` adds the
    package version). Where every run failed, the file says so: no best run (best index -1,
    an empty best embedding), each run's error in the table: a failed cell is a result to
    report, not a stopped workflow."""
    embeddings = [r.embedding for r in runs]
    return _write_runs(path, runs_table(runs), embeddings, [r.cost_trace for r in runs], meta)


def merge_runs(parts: Mapping[str, Mapping[str, Any]], path: str | Path, meta) -> Path:
    """Write to ``path`` the runs of ``parts`` (file name -> :func:`load_runs` of it: blocks
    of restarts of one grid, ``meta["grid"]``) in :func:`run_grid`'s order over them all:
    grid point by grid point, seed by seed, with ``meta``, as :func:`save_runs` writes one
    job's. A seed of a grid point in two parts, or a run at a point off the grid, raises
    ValueError naming the file."""
    order = {_point_key(point): i for i, point in enumerate(grid_points(meta["grid"]))}
    found = []
    for file, data in parts.items():
        for k, row in enumerate(data["runs"]):
            point = _point_key({key: row[key] for key in meta["grid"] if key in row})
            if point not in order:
                raise ValueError(f"{file}: run {k} at {point}, off the grid {meta['grid']}")
            found.append((order[point], row["seed"], row, data["embedding"](k), data["trace"](k)))
    found.sort(key=lambda item: item[:2])
    keys = [item[:2] for item in found]
    if len(set(keys)) < len(keys):
        raise ValueError(f"{', '.join(parts)}: a (grid point, seed) in two files")
    rows, embeddings, traces = ([item[i] for item in found] for i in (2, 3, 4))
    return _write_runs(path, rows, embeddings, traces, meta)


def _write_runs(path, rows: Sequence[Mapping], embeddings, traces, meta) -> Path:
    """The runs file's layout (:func:`save_runs`) from the runs' table rows (``cost`` None
    where a run failed), maps and cost traces; the best run is the one of lowest cost, the
    first of equals (:func:`best_run`'s choice), index -1 where every run failed."""
    costs = [np.inf if row["cost"] is None else row["cost"] for row in rows]
    best = int(np.argmin(costs)) if np.isfinite(costs).any() else -1
    arrays = {
        "best_embedding": embeddings[best] if best >= 0 else np.empty((0, 0)),
        "best_index": np.asarray(best),
    }
    for k, (embedding, trace) in enumerate(zip(embeddings, traces, strict=True)):
        arrays[f"embedding_{k}"] = embedding
        arrays[f"trace_{k}"] = trace
    return save_npz(path, arrays, {"meta": dict(meta), "runs": list(rows)})


def _point_key(point: Mapping[str, Any]) -> tuple:
    """A grid point as a sorted tuple of (name, value as float where a number)."""
    return tuple(
        sorted((k, float(v) if isinstance(v, (int, float)) else v) for k, v in point.items())
    )


def load_runs(path: str | Path) -> dict[str, Any]:
    """Read a file written by :func:`save_runs`: ``meta``, ``runs`` (table), ``best_embedding``,
    ``best`` (its row; None where every run failed), and ``embedding(k)`` / ``trace(k)``
    accessors."""
    arrays, info = load_npz(path)
    best_index = int(arrays["best_index"])
    return {
        "meta": info["meta"],
        "runs": info["runs"],
        "best": info["runs"][best_index] if best_index >= 0 else None,
        "best_embedding": arrays["best_embedding"],
        "embedding": lambda k: arrays[f"embedding_{k}"],
        "trace": lambda k: arrays[f"trace_{k}"],
    }
