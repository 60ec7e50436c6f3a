"""Perplexity calibration of Gaussian input affinities (SNE's input side).

For point i with squared input distances r_ij^2, the conditional affinities are

    p_j|i = exp(-beta_i r_ij^2) / sum_{k != i} exp(-beta_i r_ik^2),   p_i|i = 0,

and beta_i is found by bisection so that the perplexity exp(H_i) of row i,
H_i = -sum_j p_j|i log p_j|i = log Z_i + beta_i sum_j p_j|i r_ij^2 (nats), equals the target
within ``tol`` (absolute, in perplexity units). The distances are shifted by their row minimum
before exponentiating (p is unchanged; Z cannot underflow). One prange iteration per row:
each writes only its own row of P and its own beta / perplexity slot.

Two layouts share the one bisection (:func:`_calibrate_row`): a dense n x n matrix of squared
distances (:func:`conditional_affinities`, every j != i) and the k nearest neighbours of each
row, an n x k array (:func:`knn_conditional_affinities`, p_j|i over the k listed j only, the
sparse P of t-SNE at scale: :mod:`embedlab.knn_affinities`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit, prange


class PerplexityError(ValueError):
    """The target perplexity cannot be reached (too large for n, or degenerate distances)."""


def squared_distances(X: np.ndarray) -> np.ndarray:
    """Dense squared Euclidean distances ||x_i - x_j||^2 (float64, zero diagonal, >= 0)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n x D), got shape {X.shape}")
    if not np.isfinite(X).all():
        bad = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
        raise ValueError(f"X contains NaN or inf (first in row {bad})")
    Xc = X - X.mean(axis=0)
    norms = np.einsum("ij,ij->i", Xc, Xc)
    D2 = norms[:, None] + norms[None, :] - 2.0 * (Xc @ Xc.T)
    np.maximum(D2, 0.0, out=D2)
    np.fill_diagonal(D2, 0.0)
    return D2


@njit(cache=True)
def _row_entropy(d_row, i, beta, p_row):
    """Fill p_row with p_j|i for this beta (d_row already shifted); return H in nats."""
    n = d_row.shape[0]
    z = 0.0
    weighted = 0.0
    for j in range(n):
        if j == i:
            p_row[j] = 0.0
            continue
        w = math.exp(-beta * d_row[j])
        p_row[j] = w
        z += w
        weighted += w * d_row[j]
    for j in range(n):
        p_row[j] /= z
    return math.log(z) + beta * weighted / z


@njit(inline="always")
def _calibrate_row(row, skip, target, tol, max_steps, p_row):
    """Bisection on beta for one row of squared distances ``row`` (entry ``skip`` left out:
    p = 0 there; -1 keeps every entry), shifted by its minimum; fills ``p_row``; returns
    (beta, perplexity). The perplexity falls as beta grows: too flat (perp > target) doubles
    beta until an upper bound is known, then halves the bracket."""
    m = row.shape[0]
    lowest = np.inf
    for j in range(m):
        if j != skip and row[j] < lowest:
            lowest = row[j]
    d_row = np.empty(m)
    for j in range(m):
        d_row[j] = row[j] - lowest
    beta = 1.0
    lo = 0.0
    hi = np.inf
    perp = 0.0
    for _ in range(max_steps):
        perp = math.exp(_row_entropy(d_row, skip, beta, p_row))
        if abs(perp - target) <= tol:
            break
        if perp > target:  # too flat: sharpen
            lo = beta
            beta = beta * 2.0 if hi == np.inf else 0.5 * (beta + hi)
        else:
            hi = beta
            beta = 0.5 * (beta + lo)
    return beta, perp


@njit(parallel=True, cache=True)
def _calibrate(D2, target, tol, max_steps):
    n = D2.shape[0]
    P = np.zeros((n, n))
    betas = np.zeros(n)
    perplexities = np.zeros(n)
    for i in prange(n):
        betas[i], perplexities[i] = _calibrate_row(D2[i], i, target, tol, max_steps, P[i])
    return P, betas, perplexities


@njit(parallel=True, cache=True)
def _calibrate_knn(D2, target, tol, max_steps):
    """Rows of ``D2`` (n x k): the squared distances to each point's k neighbours."""
    n, k = D2.shape
    P = np.zeros((n, k))
    betas = np.zeros(n)
    perplexities = np.zeros(n)
    for i in prange(n):
        betas[i], perplexities[i] = _calibrate_row(D2[i], -1, target, tol, max_steps, P[i])
    return P, betas, perplexities


def conditional_affinities(
    D2: np.ndarray, perplexity: float, tol: float = 1e-5, max_steps: int = 200
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, beta, perplexity per row): P dense n x n with rows p_.|i summing to 1.

    Raises :class:`PerplexityError` when the perplexity is not in (1, n - 1] or some row
    misses the target by more than ``tol`` after ``max_steps`` bisection steps (e.g. a point
    with many exact duplicates)."""
    D2 = np.ascontiguousarray(D2, dtype=np.float64)
    n = D2.shape[0]
    if D2.ndim != 2 or D2.shape[1] != n:
        raise ValueError(f"squared distances must be square, got shape {D2.shape}")
    if not np.isfinite(D2).all() or (D2 < 0).any():
        raise ValueError("squared distances must be finite and non-negative")
    if not 1.0 < perplexity <= n - 1:
        raise PerplexityError(f"perplexity {perplexity} must lie in (1, n - 1 = {n - 1}]")
    P, betas, perps = _calibrate(D2, float(perplexity), float(tol), int(max_steps))
    miss = np.abs(perps - perplexity)
    if not (miss <= tol).all():
        i = int(np.argmax(miss))
        raise PerplexityError(
            f"row {i} reaches perplexity {perps[i]:.6g}, not {perplexity} (tol {tol}): "
            "degenerate distances (duplicates?)"
        )
    return P, betas, perps


def knn_conditional_affinities(
    D2: np.ndarray, perplexity: float, tol: float = 1e-5, max_steps: int = 200
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, beta, perplexity per row) over each row's k neighbours: ``D2`` is n x k (the
    squared distances from point i to its k nearest neighbours, i itself not listed) and so is
    P, p_j|i = exp(-beta_i D2[i, j]) / sum_l exp(-beta_i D2[i, l]), each row summing to 1.

    A row whose target cannot be reached (more exact duplicates, distance 0, than the
    perplexity, or all k distances equal) is not an error: it keeps the closest distribution
    the bisection reaches (equal weights on its nearest tied neighbours, never NaN) and its
    perplexity as reached; the caller reads the returned perplexities. ValueError for a
    non-finite or negative distance (naming the row) or a perplexity outside (1, k]."""
    D2 = np.ascontiguousarray(D2, dtype=np.float64)
    if D2.ndim != 2 or D2.shape[1] < 1:
        raise ValueError(f"neighbour distances must be n x k with k >= 1, got shape {D2.shape}")
    bad = ~(np.isfinite(D2) & (D2 >= 0)).all(axis=1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"neighbour distances must be finite and non-negative: row {row} is not "
            f"({int(bad.sum())} such rows)"
        )
    k = D2.shape[1]
    if not 1.0 < perplexity <= k:
        raise PerplexityError(f"perplexity {perplexity} must lie in (1, k = {k}] neighbours")
    return _calibrate_knn(D2, float(perplexity), float(tol), int(max_steps))


def symmetric_affinities(
    D2: np.ndarray, perplexity: float, tol: float = 1e-5, min_affinity: float = 1e-12
) -> sp.csr_matrix:
    """V+ = (P + P^T) / (2 n) from the calibrated conditional P: symmetric SNE's joint P,
    summing to 1 (smallvis's EE input; see :mod:`embedlab.methods.elastic` for why it is
    normalised). Conditional affinities below ``min_affinity`` are dropped before
    symmetrising (sparse V+; the change of the EE cost is < n min_affinity max r^2)."""
    P, _, _ = conditional_affinities(D2, perplexity, tol)
    P[P < min_affinity] = 0.0
    Ps = sp.csr_matrix(P)
    V = ((Ps + Ps.T) * (0.5 / P.shape[0])).tocsr()
    V.data /= V.data.sum()  # exact 1 after dropping the smallest affinities
    V.sort_indices()
    return V
