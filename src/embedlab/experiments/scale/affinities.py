"""The scale experiment's one sparse P (perplexity-calibrated over the 3 x perplexity
nearest neighbours in the PCA space, :mod:`embedlab.knn_affinities`), with the neighbours,
the PCA scores and the labels, in one file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from embedlab import artifacts, runs
from embedlab.experiments.scale.settings import AffinitiesSettings


def sparse_affinities(art: artifacts.Artifact, settings: AffinitiesSettings, where: str):
    """The P of a labelled vectors artifact (:func:`embedlab.knn_affinities.knn_affinities`)
    and the info saved with it; ``where`` names the artifact in an error."""
    from embedlab.knn_affinities import knn_affinities

    if art.kind != "vectors" or "labels" not in art.arrays:
        raise ValueError(f"{where}: the scale experiment needs labelled vectors")
    aff = knn_affinities(
        art.arrays["X"], settings.perplexity, settings.pca_dims, seed=settings.seed
    )
    info = {
        "dataset": art.meta.get("name", Path(where).name),
        "perplexity": settings.perplexity,
        "k": aff.neighbours.shape[1],
        "pca_dims": settings.pca_dims,
        "seed": settings.seed,
    }
    return aff, info


def save_affinities(path, aff, labels: np.ndarray, info: dict) -> Path:
    """The affinity step's result: P (sparse), neighbours, PCA scores, labels."""
    arrays = {
        "P": aff.P,
        "neighbours": aff.neighbours.astype(np.int32),
        "Z": aff.Z,
        "labels": np.asarray(labels),
    }
    info = {
        **info,
        "n": aff.P.shape[0],
        "knn_method": aff.method,
        "missed_rows": aff.missed,
        "seconds": {k: round(v, 3) for k, v in aff.seconds.items()},
    }
    return runs.save_npz(path, arrays, info)


def load_affinities(path) -> tuple[dict, dict]:
    """(arrays with ``P`` as CSR, info) of a file written by :func:`save_affinities`."""
    return runs.load_npz(path)
