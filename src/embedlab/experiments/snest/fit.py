"""Every run of one Table 1 cell on one dataset: restarts x grid points on the dataset's P,
all kept (:mod:`embedlab.runs`); the stopping tests may end or abandon a run early."""

from __future__ import annotations

import functools
import logging

import numpy as np

from embedlab import artifacts, runs
from embedlab.experiments.snest.cells import TIME_KEYS, cell_label, make_estimator, parse_cell
from embedlab.experiments.snest.settings import EmbedSettings
from embedlab.optimize import BACKOFF, DivergenceError

log = logging.getLogger(__name__)

#: above this many points the perplexity P comes from nearest neighbours, not all pairs
DENSE_AFFINITIES_BELOW = 5000


def vectors_affinities(X: np.ndarray, perplexity: float, seed: int):
    """t-SNE's joint P of the points ``X`` at ``perplexity``: from all pairs below
    :data:`DENSE_AFFINITIES_BELOW` points, else from the 3 x perplexity nearest neighbours
    (:func:`embedlab.knn_affinities.knn_affinities`, as the scale experiment)."""
    n = len(X)
    if not 1 < perplexity < n - 1:
        raise ValueError(
            f"perplexity {perplexity:g} needs more than {perplexity + 1:g} points, got {n}"
        )
    if n < DENSE_AFFINITIES_BELOW:
        from embedlab.perplexity import squared_distances, symmetric_affinities

        return symmetric_affinities(squared_distances(np.asarray(X, dtype=np.float64)), perplexity)
    from embedlab.knn_affinities import knn_affinities

    return knn_affinities(X, perplexity, seed=seed).P


def affinities(art: artifacts.Artifact, perplexity: float, seed: int, where: str):
    """The P a cell embeds: a similarity artifact's own, a vectors artifact's (a user's own
    dataset) t-SNE joint P at ``perplexity`` (:func:`vectors_affinities`); ``where`` names
    the artifact in an error."""
    if art.kind == "vectors":
        return vectors_affinities(art.arrays["X"], perplexity, seed)
    if art.kind == "similarity":
        return art.arrays["P"]
    raise ValueError(f"{where}: SNEST needs a similarity or vectors artifact, got {art.kind!r}")


def stopping_rules(stopping: dict) -> dict:
    """The stopping tests of :class:`embedlab.optimize.GradientDescent` from the section's
    ``stopping``: ``rate_window`` epochs (0: neither test), ``plateau_tol`` and
    ``abandon_margin`` (relative; inf: never abandon)."""
    return {
        "rate_window": int(stopping["rate_window"]),
        "plateau_tol": float(stopping["plateau_tol"]),
        "abandon_margin": float(stopping["abandon_margin"]),
    }


def embed_cell(
    art: artifacts.Artifact,
    cell: str,
    settings: EmbedSettings,
    dataset: str,
    restarts: range | None = None,
) -> tuple[list[runs.Run], dict]:
    """Every restart x grid point of ``cell`` on the artifact's P (:func:`affinities`):
    the runs and their meta (the settings they ran with). ``restarts``: of the cell's
    ``settings.restarts``, the block this job runs (consecutive; restart r has seed
    ``settings.seed + r`` wherever it runs); all of them by default.

    With a finite ``abandon_margin`` each run is compared with the best finished run so far
    of the cell and abandoned once it cannot catch up. ``precision``: the kernel's working
    precision, "float64" or "float32" (the estimators' ``precision``). SNE and t-SNE drop
    SNEST's time keys of the grid.

    The paper's protocol searches the grid's rates with no backoff (a diverging run is a
    failed run). Where every run of the cell fails (a small graph, a heavy row of P: the
    rates suit the papers' data), the grid runs again with the estimators' backoff: a
    diverging run restarts with its rates halved (:mod:`embedlab.optimize`), and each run
    that needed it records its ``backoffs`` and ``learning_rate_used``; the meta's
    ``backed_off`` says the cell went through this second pass."""
    P = affinities(art, settings.perplexity, settings.seed, where=dataset)
    method, _, n_time = parse_cell(cell)
    grid = dict(settings.grid)
    if method != "snest":
        grid = {k: v for k, v in grid.items() if k not in TIME_KEYS}
    stopping = stopping_rules(settings.stopping)
    factory = functools.partial(
        make_estimator,
        cell,
        max_iter=settings.max_iter,
        log_every=settings.log_every,
        precision=settings.precision,
        **stopping,
    )
    block = range(settings.restarts) if restarts is None else restarts
    if block.step != 1 or not 0 <= block.start < block.stop <= settings.restarts:
        raise ValueError(f"restarts {block}: not a block of the cell's {settings.restarts}")

    def run_cell(make):
        return runs.run_grid(
            make, P, grid, len(block), seed=settings.seed + block.start,
            catch=(DivergenceError,), reference=True,
        )  # fmt: skip

    all_runs = run_cell(factory)
    backed_off = not runs.finished(all_runs)
    if backed_off:  # small or odd data: the grid's rates are too long for every run
        log.warning("%s on %s: every run diverged; again, backing off on divergence", cell, dataset)
        all_runs = run_cell(functools.partial(factory, backoff=BACKOFF))
    meta = {
        "experiment": "snest",
        "dataset": art.meta.get("name", dataset),
        "cell": cell,
        "label": cell_label(cell),
        "n_time": n_time,
        "grid": grid,
        "n_restarts": len(block),
        "first_restart": block.start,
        "seed": settings.seed,
        "max_iter": settings.max_iter,
        "stopping": stopping,
        "precision": settings.precision,
        "backed_off": backed_off,
    }
    return all_runs, meta
