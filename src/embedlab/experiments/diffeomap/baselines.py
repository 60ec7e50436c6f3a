"""The paper's baselines: 2-D PCA, Isomap (and t-SNE) maps of a dataset as its Diffeomap fits
see it, with their 1-NN errors."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from embedlab.experiments.diffeomap.data import prepare
from embedlab.experiments.diffeomap.scoring import class_errors
from embedlab.experiments.diffeomap.settings import BaselineSettings


def baseline_map(method: str, X: np.ndarray, seed: int, n_neighbors: int) -> np.ndarray:
    """2-D PCA, Isomap (n_neighbors) or t-SNE (scikit-learn) of X."""
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE, Isomap

    if method == "pca":
        return PCA(n_components=2, random_state=seed).fit_transform(X)
    if method == "isomap":
        return Isomap(n_neighbors=n_neighbors, n_components=2).fit_transform(X)
    if method == "tsne":
        return TSNE(n_components=2, random_state=seed, init="pca").fit_transform(X)
    raise ValueError(f"unknown baseline {method!r}; expected pca, isomap or tsne")


def baseline_maps(
    artifact_dir: str | Path, settings: BaselineSettings, dataset: str
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, info) of a baselines file: ``map_<method>`` of each of ``settings.baselines``
    and ``rows``; info ``{"meta", "runs"}``, one run per method with its 1-NN errors and the
    settings it was made with (``params``)."""
    preparation = settings.preparation
    X, classes, info = prepare(artifact_dir, preparation, settings.seed)
    arrays, table = {}, []
    for method in settings.baselines:
        t0 = time.perf_counter()
        Y = baseline_map(method, X, settings.seed, settings.isomap_neighbors)
        errors, n_lab = class_errors(Y, classes)
        table.append(
            {
                "method": method,
                "errors": errors,
                "n_labelled": n_lab,
                "seconds": round(time.perf_counter() - t0, 2),
                "params": {"n_neighbors": settings.isomap_neighbors} if method == "isomap" else {},
            }
        )
        arrays[f"map_{method}"] = Y
    meta = {
        "dataset": dataset,
        "seed": settings.seed,
        "subsample": preparation.subsample,
        "pca_dims": preparation.pca_dims,
        "top_authors": preparation.top_authors,
    }
    arrays["rows"] = np.asarray(info.pop("rows"), dtype=np.int64)
    return arrays, {"meta": {**meta, **info}, "runs": table}
