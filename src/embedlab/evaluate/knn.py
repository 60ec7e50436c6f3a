"""k-nearest-neighbour measures of an embedding: leave-one-out 1-NN error, trustworthiness,
neighbourhood preservation (the neighbour embeddings themselves are in methods/neighbour.py)."""

from __future__ import annotations

import numpy as np

# scikit-learn's neighbours and manifold modules and knn_affinities (numba) are imported in
# the functions that use them: a job that measures only 1-NN errors imports neither
# sklearn.manifold nor numba.


def loo_1nn_errors(Y: np.ndarray, labels: np.ndarray) -> int:
    """Leave-one-out 1-NN errors: #{i : label(nearest j != i in Y) != label(i)}.

    Ties in distance are broken by the lower index (scikit-learn's order). Exact duplicates
    of a point count as its nearest neighbours.
    """
    Y = np.asarray(Y, dtype=np.float64)
    labels = np.asarray(labels)
    if Y.ndim != 2 or len(Y) != len(labels):
        raise ValueError(f"Y has shape {Y.shape} but labels has {len(labels)} entries")
    if len(Y) < 2:
        raise ValueError("leave-one-out 1-NN needs at least two points")
    if not np.isfinite(Y).all():
        raise ValueError("embedding contains NaN or inf")
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=2).fit(Y)
    _, idx = nn.kneighbors(Y)
    own = np.arange(len(Y))
    # the first neighbour is normally the point itself; where a duplicate came first, take it
    nearest = np.where(idx[:, 0] == own, idx[:, 1], idx[:, 0])
    return int(np.count_nonzero(labels[nearest] != labels))


def loo_1nn_error_rate(Y: np.ndarray, labels: np.ndarray) -> float:
    """Leave-one-out 1-NN error as a fraction of the points."""
    return loo_1nn_errors(Y, labels) / len(labels)


def trustworthiness(X: np.ndarray, Y: np.ndarray, n_neighbors: int = 10) -> float:
    """Trustworthiness of embedding ``Y`` of ``X`` (scikit-learn's implementation)."""
    from sklearn.manifold import trustworthiness as _sk_trustworthiness

    return float(_sk_trustworthiness(X, Y, n_neighbors=n_neighbors))


def knn_preservation(reference: np.ndarray, Y: np.ndarray, k: int = 10) -> float:
    """Mean over the points of |N_k(i) & M_k(i)| / k, where N_k(i) is the first ``k`` columns
    of ``reference`` (each point's nearest neighbours in the input, nearest first, i itself
    not listed) and M_k(i) its k nearest other points in the map ``Y`` (exact, scikit-learn;
    a duplicate of i may stand in for i itself, as in :func:`nearest_neighbours`)."""
    reference = np.asarray(reference)
    Y = np.asarray(Y, dtype=np.float64)
    if reference.ndim != 2 or reference.shape[0] != len(Y) or reference.shape[1] < k:
        raise ValueError(
            f"reference neighbours of shape {reference.shape} do not give {k} neighbours for "
            f"each of the {len(Y)} points of the map"
        )
    if not np.isfinite(Y).all():
        raise ValueError("embedding contains NaN or inf")
    from embedlab.knn_affinities import nearest_neighbours

    mapped, _, _ = nearest_neighbours(Y, k, exact_below=len(Y) + 1)
    hits = (mapped[:, :, None] == reference[:, None, :k]).any(axis=2)  # n x k, no n^2
    return float(hits.mean())
