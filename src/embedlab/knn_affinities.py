"""Sparse perplexity affinities at scale: PCA, k nearest neighbours, calibration, P.

t-SNE's input P at n = 70,000 (openTSNE's and UMAP's recipe) without an n x n array:

1. PCA of the data to ``pca_dims`` columns (scikit-learn, ``svd_solver="covariance_eigh"``:
   exact, one D x D covariance, cheap for n >> D);
2. the k = ceil(3 perplexity) nearest neighbours of every point in that space: exact
   (scikit-learn ``NearestNeighbors``) below ``exact_below`` points, else approximate
   (pynndescent's NN-descent, which openTSNE and UMAP use; ~0.99 of the exact neighbours);
3. p_j|i over those k neighbours only, beta_i calibrated per row to the target perplexity
   (:func:`embedlab.perplexity.knn_conditional_affinities`: one bisection per row, numba);
4. P = (P_cond + P_cond^T) / (2 n), a scipy CSR matrix summing to 1: the ``P`` that
   :class:`embedlab.methods.neighbour_kl.NeighbourKL` and the estimators take.

With k = n - 1 and exact neighbours it is the dense perplexity P of
:func:`embedlab.perplexity.symmetric_affinities` (``min_affinity=0``), up to rounding.

Bad input fails early: a NaN / inf entry (ValueError naming its row), fewer than k + 1
points. Exact duplicates are kept as separate points: each lists the other among its nearest
neighbours at distance 0 (where a duplicate displaced the point itself from its own list, the
farthest neighbour is dropped instead); a point with more exact duplicates than the perplexity
cannot reach it and keeps equal weights on its duplicates (:func:`knn_conditional_affinities`;
counted in ``KnnAffinities.missed``). P has no NaN either way.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from embedlab.checks import check_points
from embedlab.perplexity import knn_conditional_affinities

# scikit-learn's PCA and NearestNeighbors, and pynndescent, are imported in the functions that
# run them: each costs start-up time that a job using another path need not pay.

log = logging.getLogger(__name__)

#: below this many points the neighbours are exact (scikit-learn), from it on pynndescent's;
#: the one home of the threshold (brute force at 10,000 points in 50-D: ~1 s)
EXACT_KNN_BELOW = 10_000
#: neighbours per unit of perplexity (openTSNE's and FIt-SNE's k = 3 perplexity)
NEIGHBOURS_PER_PERPLEXITY = 3
#: |reached - target| perplexity above which a row counts as missed
TOLERANCE = 1e-5


def neighbours_for(perplexity: float) -> int:
    """k = ceil(3 perplexity): 90 at perplexity 30."""
    return int(math.ceil(NEIGHBOURS_PER_PERPLEXITY * perplexity))


def pca(X, n_components: int, seed: int = 0) -> np.ndarray:
    """The scores of ``X`` on its top ``n_components`` principal axes (all columns if D is
    not larger); scikit-learn's sign convention."""
    X = check_points(X)
    if X.shape[1] <= n_components:
        return X - X.mean(axis=0)
    from sklearn.decomposition import PCA

    model = PCA(n_components=n_components, svd_solver="covariance_eigh", random_state=seed)
    return model.fit_transform(X)


def nearest_neighbours(
    X, k: int, exact_below: int = EXACT_KNN_BELOW, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, str]:
    """(indices, squared distances, method): each point's k nearest other points, nearest
    first (n x k each); ``method`` "exact" (n < ``exact_below``) or "nndescent"."""
    X = check_points(X)
    n = X.shape[0]
    if not 1 <= k <= n - 1:
        raise ValueError(f"k = {k} neighbours need at least k + 1 = {k + 1} points, got n = {n}")
    if n < exact_below:
        from sklearn.neighbors import NearestNeighbors

        method = "exact"
        dist, idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    else:
        from pynndescent import NNDescent  # slow to import and compile: only when used

        method = "nndescent"
        index = NNDescent(X, n_neighbors=k + 1, metric="euclidean", random_state=seed)
        idx, dist = index.neighbor_graph
    idx, dist = _drop_self(np.asarray(idx, dtype=np.int64), np.asarray(dist, dtype=np.float64))
    if (idx < 0).any():  # NN-descent leaves -1 where it found too few neighbours
        row = int(np.flatnonzero((idx < 0).any(axis=1))[0])
        raise RuntimeError(f"the neighbour search found fewer than {k} neighbours for row {row}")
    return idx, dist**2, method


def _drop_self(idx: np.ndarray, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From k + 1 neighbours listed per row, drop the point itself (or, where exact duplicates
    pushed it out of its own list, the farthest one)."""
    n = idx.shape[0]
    own = idx == np.arange(n)[:, None]
    drop = np.where(own.any(axis=1), own.argmax(axis=1), idx.shape[1] - 1)
    keep = np.ones(idx.shape, dtype=bool)
    keep[np.arange(n), drop] = False
    k = idx.shape[1] - 1
    return idx[keep].reshape(n, k), dist[keep].reshape(n, k)


def symmetrise(P_cond: np.ndarray, idx: np.ndarray) -> sp.csr_matrix:
    """(P_cond + P_cond^T) / (2 n) as CSR (sorted indices, no explicit zeros): row i of
    ``P_cond`` holds p_j|i for the neighbours ``idx[i]``."""
    n, k = idx.shape
    rows = np.repeat(np.arange(n), k)
    C = sp.csr_matrix((P_cond.ravel(), (rows, idx.ravel())), shape=(n, n))
    P = ((C + C.T) * (0.5 / n)).tocsr()
    P.eliminate_zeros()
    P.sort_indices()
    return P


@dataclass
class KnnAffinities:
    """What :func:`knn_affinities` returns."""

    P: sp.csr_matrix  # the symmetric joint P (n x n, sums to 1)
    neighbours: np.ndarray  # n x k indices in the PCA space, nearest first
    Z: np.ndarray  # the PCA scores the neighbours were found in (n x pca_dims)
    method: str  # "exact" or "nndescent"
    perplexities: np.ndarray  # reached, per row
    missed: int  # rows whose target perplexity was out of reach (duplicates)
    seconds: dict = field(default_factory=dict)  # pca, knn, calibrate, symmetrise


def knn_affinities(
    X,
    perplexity: float = 30.0,
    pca_dims: int | None = 50,
    k: int | None = None,
    exact_below: int = EXACT_KNN_BELOW,
    seed: int = 0,
) -> KnnAffinities:
    """The sparse perplexity P of ``X`` (module docstring); ``pca_dims`` None: no PCA;
    ``k`` None: :func:`neighbours_for` (perplexity)."""
    seconds = {}
    started = time.perf_counter()
    X = check_points(X)
    k = neighbours_for(perplexity) if k is None else int(k)
    if X.shape[0] < k + 1:
        raise ValueError(
            f"perplexity {perplexity} uses k = {k} neighbours: needs at least {k + 1} points, "
            f"got n = {X.shape[0]}"
        )
    Z = X if pca_dims is None else pca(X, pca_dims, seed)
    seconds["pca"] = time.perf_counter() - started
    started = time.perf_counter()
    idx, D2, method = nearest_neighbours(Z, k, exact_below, seed)
    seconds["knn"] = time.perf_counter() - started
    started = time.perf_counter()
    P_cond, _, reached = knn_conditional_affinities(D2, perplexity, TOLERANCE)
    seconds["calibrate"] = time.perf_counter() - started
    missed = np.flatnonzero(np.abs(reached - perplexity) > TOLERANCE)
    if missed.size:
        log.warning(
            "%d rows cannot reach perplexity %g (exact duplicates); first: row %d at %.4g",
            missed.size, perplexity, missed[0], reached[missed[0]],
        )
    started = time.perf_counter()
    P = symmetrise(P_cond, idx)
    seconds["symmetrise"] = time.perf_counter() - started
    log.info(
        "P: n = %d, k = %d (%s), nnz %d; seconds %s",
        X.shape[0], k, method, P.nnz, {key: round(v, 2) for key, v in seconds.items()},
    )
    return KnnAffinities(P, idx, Z, method, reached, int(missed.size), seconds)
