"""Generated vector datasets of the Elastic Embedding sweeps: Swiss roll, s1k, iris.

* Swiss roll (scikit-learn's ``make_swiss_roll``): roll angle t = 1.5 pi (1 + 2 u), u ~ U(0,1);
  x = t cos t, y = 21 v (v ~ U(0,1)), z = t sin t, plus N(0, noise^2). The angle is kept
  (``t`` array and items column, for the unrolling check); labels = ``n_bins`` equal-count bins
  of t.
* s1k (smallvis / snedata): a "fuzzy" simplex. The ``n_clusters`` vertices of a regular simplex
  with edge ``edge`` (2) in ``dims`` (9) dimensions; each cluster is its vertex plus
  ``n_points / n_clusters - 1`` points drawn from N(vertex, sd^2 I) with sd = 0.5.
  labels = cluster.
* iris: scikit-learn's bundled copy of Fisher's iris (150 x 4, 3 species).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from embedlab.artifacts import Artifact

# scikit-learn's datasets module (~1 s to import) only in the builders that call it: s1k
# needs none of it.


def build_swiss_roll(
    files: dict, n_points: int = 2000, noise: float = 0.0, seed: int = 0, n_bins: int = 10
) -> Artifact:
    """Swiss roll with its roll angle; labels = angle quantile bin 0..n_bins-1."""
    if n_points < n_bins or n_bins < 1 or noise < 0:
        raise ValueError(
            f"swiss roll: need n_points >= n_bins >= 1 and noise >= 0 "
            f"(got n_points={n_points}, n_bins={n_bins}, noise={noise})"
        )
    from sklearn.datasets import make_swiss_roll

    X, t = make_swiss_roll(n_samples=n_points, noise=noise, random_state=seed)
    edges = np.quantile(t, np.linspace(0.0, 1.0, n_bins + 1)[1:-1])
    labels = np.searchsorted(edges, t, side="right").astype(np.int64)
    return Artifact(
        kind="vectors",
        arrays={"X": X.astype(np.float64), "labels": labels, "t": t},
        items=pd.DataFrame({"name": [f"p{k}" for k in range(n_points)], "t": t}),
    )


def simplex_vertices(n_vertices: int, dims: int, edge: float = 2.0) -> np.ndarray:
    """Vertices of a regular simplex with edge length ``edge``, centred at 0, in ``dims`` dims.

    The scaled unit vectors (edge / sqrt 2) e_k of R^n are centred and written in the Helmert
    basis h_j = (1, ..., 1, -j, 0, ...) / sqrt(j (j + 1)) of the plane sum(x) = 0.
    """
    if n_vertices < 2 or dims < n_vertices - 1:
        raise ValueError(f"a {n_vertices}-vertex simplex needs dims >= {n_vertices - 1}")
    helmert = np.zeros((n_vertices, n_vertices - 1))
    for j in range(1, n_vertices):
        helmert[:j, j - 1] = 1.0
        helmert[j, j - 1] = -float(j)
        helmert[:, j - 1] /= np.sqrt(j * (j + 1.0))
    corners = (edge / np.sqrt(2.0)) * (np.eye(n_vertices) - 1.0 / n_vertices)
    vertices = np.zeros((n_vertices, dims))
    vertices[:, : n_vertices - 1] = corners @ helmert
    return vertices


def build_s1k(
    files: dict,
    n_points: int = 1000,
    n_clusters: int = 10,
    dims: int = 9,
    seed: int = 0,
    sd: float = 0.5,
    edge: float = 2.0,
) -> Artifact:
    """Fuzzy simplex: each cluster = its vertex + Gaussian points around it (labels = cluster)."""
    if n_points % n_clusters != 0 or n_points < n_clusters:
        raise ValueError(f"s1k: n_points={n_points} must be a multiple of n_clusters={n_clusters}")
    vertices = simplex_vertices(n_clusters, dims, edge)
    per_cluster = n_points // n_clusters
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(n_clusters, dtype=np.int64), per_cluster)
    X = vertices[labels] + sd * rng.standard_normal((n_points, dims))
    X[::per_cluster] = vertices  # the first point of every cluster is the vertex itself
    return Artifact(
        kind="vectors",
        arrays={"X": X, "labels": labels},
        items=pd.DataFrame({"name": [f"c{c}_{k % per_cluster}" for k, c in enumerate(labels)],
                            "cluster": labels}),
    )


def build_iris(files: dict) -> Artifact:
    """Fisher's iris: 150 x 4 measurements (cm), labels = species 0..2."""
    from sklearn.datasets import load_iris

    iris = load_iris()
    species = [str(iris.target_names[k]) for k in iris.target]
    return Artifact(
        kind="vectors",
        arrays={"X": np.asarray(iris.data, dtype=np.float64),
                "labels": np.asarray(iris.target, dtype=np.int64)},
        items=pd.DataFrame({"name": [f"{s}{k % 50 + 1}" for k, s in enumerate(species)],
                            "species": species}),
        meta={"label_names": [str(s) for s in iris.target_names]},
    )
