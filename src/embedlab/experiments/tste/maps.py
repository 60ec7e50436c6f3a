"""The 2-D maps of Figs. 3 and 4: one method fitted in two dimensions on all triplets of a
dataset, under the paper's text or the authors' Fig. 3 rule (mnist_make_maps.m)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from embedlab import runs
from embedlab.experiments.tste.authors import AUTHORS_CODE, authors_max_iter, authors_params
from embedlab.experiments.tste.protocol import PREFIX, load_triplets, make_estimator
from embedlab.experiments.tste.settings import SolverOptions

log = logging.getLogger(__name__)


def embed_map(
    artifact_dir: str | Path,
    method: str,
    out: str | Path,
    *,
    seed: int,
    max_iter: int | None,
    protocol: str,
    max_triplets: int | None = None,
    params: Mapping[str, Any] | None = None,
    settings: SolverOptions | Mapping[str, Any] | None = None,
) -> None:
    """Fit ``method`` in 2-D on all triplets; save embedding, labels and errors to ``out``.

    ``protocol="authors_code"`` (mnist_make_maps.m): the coded solver settings
    (:func:`authors_params`; ``max_iter`` None = coded), self-triplets accepted, and each map
    axis rescaled to [0, 1] before the errors are measured (ties correct);
    ``"authors_figure"``: the same with the reading's solver ``settings``."""
    from embedlab.evaluate.knn import loo_1nn_error_rate
    from embedlab.evaluate.triplets import triplet_error

    if protocol not in PREFIX:
        raise ValueError(f"protocol must be one of {sorted(PREFIX)}, got {protocol!r}")
    authors = protocol != "paper_text"
    if not authors and SolverOptions.from_mapping(settings, f"{method}: solver settings").given():
        raise ValueError(f"{method}: solver settings belong to the authors' readings")
    trip, n, labels, allow_self = load_triplets(artifact_dir, max_triplets, seed, True)
    t0 = time.perf_counter()
    if authors:
        fit_params = authors_params(method, params, settings)
        max_iter = authors_max_iter(method, max_iter)
    else:
        if max_iter is None:
            raise ValueError(f"{method}: the paper_text protocol needs max_iter")
        fit_params = dict(params or {})
    est = make_estimator(method, 2, **fit_params, max_iter=max_iter, random_state=seed)
    Y = est.fit(trip, n=n, allow_self=allow_self).embedding_
    ties = "violated"
    if authors:
        Y = Y - Y.min(axis=0)
        span = Y.max(axis=0)
        Y = Y / np.where(span > 0, span, 1.0)
        ties = AUTHORS_CODE["ties"]
    meta = {
        "dataset": Path(artifact_dir).name,
        "method": method,
        "protocol": protocol,
        "n": n,
        "n_triplets": int(len(trip)),
        "training_error": triplet_error(Y, trip, allow_self=allow_self, ties=ties),
        "loo_1nn_error": loo_1nn_error_rate(Y, labels),
        "n_iter": int(est.n_iter_),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    log.info("%s", meta)
    runs.save_npz(out, {"embedding": Y, "labels": labels}, {"meta": meta})


def load_map(path: str | Path) -> tuple[np.ndarray, np.ndarray, dict]:
    """(embedding, labels, meta) of a map written by :func:`embed_map`."""
    arrays, info = runs.load_npz(path)
    return arrays["embedding"], arrays["labels"], info["meta"]
