"""The neighbour embeddings' input P: the checks of a given P and the perplexity P of points.

The estimators of :mod:`embedlab.methods.neighbour` (and the Elastic Embedding's) take an
affinity matrix P, a joint distribution over ordered pairs (i, j), i != j, either given
(``affinity="precomputed"``: :func:`validate_affinities`) or built from points x features
(``affinity="perplexity"``: :func:`perplexity_affinities`, openTSNE's and scikit-learn's
construction over each point's nearest neighbours).

Input P: square, finite, non-negative, symmetric (|P - P^T| <= 1e-9 max P), zero diagonal,
no empty row, summing to 1 within 1e-6 (then rescaled to sum exactly 1). P is NOT normalised
silently beyond that tolerance: a P that sums to 2 (e.g. counted twice) is a bug upstream, so
it raises :class:`InvalidAffinityError` naming the field and value.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp


class InvalidAffinityError(ValueError):
    """The affinity matrix P is not a valid joint distribution over pairs."""


SUM_TOLERANCE = 1e-6
SYMMETRY_TOLERANCE = 1e-9


def validate_affinities(P, name: str = "P") -> sp.csr_matrix:
    """Return ``P`` as a new float64 CSR matrix summing to 1 (divided by its sum), or raise
    :class:`InvalidAffinityError` saying what is wrong (see the module docstring). ``P``
    itself is never modified: normalising a caller's P in place would divide it again at the
    next fit on the same P (a sum of 1 - 1.1e-16 moves some entries by an ulp), so a run's
    result would depend on the runs fitted before it."""
    if sp.issparse(P):
        M = sp.csr_matrix(P, dtype=np.float64, copy=True)
    else:
        dense = np.asarray(P, dtype=np.float64)
        if dense.ndim != 2:
            raise InvalidAffinityError(f"{name}: must be a 2-D matrix, got shape {dense.shape}")
        M = sp.csr_matrix(dense)
    n = M.shape[0]
    if M.shape[0] != M.shape[1] or n < 2:
        raise InvalidAffinityError(f"{name}: must be square with n >= 2, got shape {M.shape}")
    M.sum_duplicates()
    M.eliminate_zeros()
    bad = ~np.isfinite(M.data)
    if bad.any():
        row = int(np.searchsorted(M.indptr, np.flatnonzero(bad)[0], side="right") - 1)
        raise InvalidAffinityError(
            f"{name}: {int(bad.sum())} NaN/inf values (first in row {row})"
        )
    if (M.data < 0).any():
        raise InvalidAffinityError(f"{name}: negative entries (min {M.data.min():.3g})")
    diagonal = M.diagonal()
    if np.any(diagonal != 0):
        i = int(np.flatnonzero(diagonal)[0])
        raise InvalidAffinityError(f"{name}: non-zero diagonal (P[{i},{i}] = {diagonal[i]:.3g})")
    empty = np.flatnonzero(np.diff(M.indptr) == 0)
    if empty.size:
        raise InvalidAffinityError(
            f"{name}: {empty.size} empty rows (first: row {int(empty[0])}); "
            "an item without neighbours cannot be embedded"
        )
    asym = abs(M - M.T)
    if asym.nnz and asym.max() > SYMMETRY_TOLERANCE * M.data.max():
        raise InvalidAffinityError(f"{name}: not symmetric (max |P - P^T| = {asym.max():.3g})")
    total = float(M.data.sum())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise InvalidAffinityError(
            f"{name}: sums to {total!r}, expected 1 (over ordered pairs i != j, within "
            f"{SUM_TOLERANCE}); normalise it upstream"
        )
    M.data /= total
    M.sort_indices()
    return M


def looks_like_affinities(X: np.ndarray) -> bool:
    """True when the dense array ``X`` is square, non-negative, symmetric, with a zero
    diagonal and summing to 1 within :data:`SUM_TOLERANCE`: a joint distribution over pairs
    (what ``affinity="precomputed"`` takes) rather than points x features."""
    n = X.shape[0]
    return (
        n >= 2
        and X.shape == (n, n)
        and bool((X >= 0).all())
        and not X.diagonal().any()
        and abs(float(X.sum()) - 1.0) <= SUM_TOLERANCE
        and bool(np.allclose(X, X.T, rtol=0.0, atol=SYMMETRY_TOLERANCE * float(X.max())))
    )


def refuse_sparse_points(X) -> None:
    """Raise TypeError for a sparse ``X`` where points x features are expected: a sparse
    matrix given to ``affinity="perplexity"`` is most likely an affinity matrix P."""
    if sp.issparse(X):
        raise TypeError(
            "X is a sparse matrix: with affinity='perplexity' X holds points x features "
            "(dense); pass affinity='precomputed' if X is an affinity matrix P"
        )


def usable_perplexity(perplexity: float, n: int) -> float:
    """The perplexity a P over ``n`` points is built at: ``perplexity``, or (n - 1) / 3 with a
    warning where it asks for more neighbours (3 per unit) than the other n - 1 points, as
    openTSNE lowers it; an error below 5 points, where not even a perplexity above 1 fits."""
    from embedlab.knn_affinities import NEIGHBOURS_PER_PERPLEXITY, neighbours_for

    perplexity = float(perplexity)
    highest = (n - 1) / NEIGHBOURS_PER_PERPLEXITY
    if not perplexity > 1.0:
        raise ValueError(f"perplexity must be > 1, got {perplexity!r}")
    if perplexity > highest:
        if highest <= 1.0:
            raise ValueError(f"{n} points are too few for a perplexity P (need n >= 5)")
        warnings.warn(
            f"perplexity {perplexity:g} needs {neighbours_for(perplexity)} neighbours of "
            f"{n - 1}; using perplexity {highest:g}",
            stacklevel=4,
        )
        perplexity = highest
    return perplexity


def perplexity_affinities(
    X, perplexity: float, neighbors: str = "auto", seed: int = 0
) -> tuple[sp.csr_matrix, float]:
    """(P, the perplexity used): the sparse perplexity P of the points ``X`` (n x D) that the
    estimators build with ``affinity="perplexity"``.

    p_j|i is calibrated to the perplexity over the k = ceil(3 perplexity) nearest neighbours
    of x_i in the input space (no PCA), P = (P_cond + P_cond^T) / (2 n)
    (:func:`embedlab.knn_affinities.knn_affinities`). ``neighbors``: "auto" (exact below
    :data:`embedlab.knn_affinities.EXACT_KNN_BELOW` points, else pynndescent's NN-descent, as
    openTSNE switches at scale), "exact" or "approx". A perplexity above (n - 1) / 3 (more
    neighbours than other points) is lowered to (n - 1) / 3 with a warning, as openTSNE does.
    """
    from embedlab.checks import check_points
    from embedlab.knn_affinities import EXACT_KNN_BELOW, knn_affinities, neighbours_for

    refuse_sparse_points(X)
    X = check_points(X)
    if looks_like_affinities(X):
        raise ValueError(
            "X is square, symmetric, non-negative, with a zero diagonal and sums to 1: an "
            "affinity matrix, not points x features; pass affinity='precomputed'"
        )
    exact_below = {"auto": EXACT_KNN_BELOW, "exact": X.shape[0] + 1, "approx": 0}
    if neighbors not in exact_below:
        raise ValueError(f"neighbors={neighbors!r}; expected one of {list(exact_below)}")
    n = X.shape[0]
    perplexity = usable_perplexity(perplexity, n)
    k = min(neighbours_for(perplexity), n - 1)
    aff = knn_affinities(
        X, perplexity, pca_dims=None, k=k, exact_below=exact_below[neighbors], seed=seed
    )
    return aff.P, perplexity
