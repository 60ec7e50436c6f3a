"""Numba kernels over a triplet list (i, j, l): "i is more similar to j than to l".

Every triplet objective is a sum of per-triplet losses L(a, b) of the two squared distances
a = d_ij^2 and b = d_il^2. One function, :func:`triplet_loss`, gives L and its partial
derivatives dL/da, dL/db; the loss is chosen by an integer code and one scalar parameter:

* GNMDS  L = max(0, 1 + a - b)                                    (param unused)
* CKL    L = -log p,  p = (b + mu) / (a + b + 2 mu)                (param = mu >= 0)
* STE    L = -log p,  p = e^-a / (e^-a + e^-b) = softplus(a - b)   (param unused)
* t-STE  L = -log p,  p = q(a) / (q(a) + q(b)),
         q(d) = (1 + d / alpha)^(-(alpha + 1) / 2)                 (param = alpha > 0)

:func:`objective_term` turns a probabilistic loss into the term of the objective: -log p
(``use_log``, the log-likelihood of the paper's STE and t-STE, section 4) or -p (the sum of
probabilities, an option of the authors' released ``tste.m`` and STE code), with
dL/da = p d(-log p)/da since p = exp(-(-log p)).

Two loops use :func:`objective_term`:

* :func:`coords_cost_grad` -- X forms: cost and dC/dX in one pass over the triplets,
  da/dx_i = 2 (x_i - x_j), da/dx_j = -2 (x_i - x_j) (b alike with l). The triplets are cut
  into a fixed number of contiguous chunks run in parallel; each chunk scatters into its own
  gradient buffer and cost slot, and the buffers are summed afterwards (parallel over rows).
  No races, and the result does not depend on the number of threads.
* :func:`triplet_terms` -- per-triplet (L, dL/da, dL/db) from coordinates or from a Gram
  matrix K (a = k_ii + k_jj - k_ij - k_ji), scattered into dC/dK by :func:`gather_grad_gram`,
  a gather over a per-point incidence list in which each point writes only its own row.

All sums are in float64.
"""

from __future__ import annotations

import math

import numba
import numpy as np

GNMDS = 0
CKL = 1
STE = 2
TSTE = 3

# number of triplet chunks (and gradient buffers) of coords_cost_grad: fixed, so that the
# summation order -- hence the result -- does not depend on the number of threads
N_CHUNKS = 32

# smallest value a CKL probability's numerator / denominator is clamped to (as in
# van der Maaten's code: realmin), so that mu = 0 with a zero distance gives a finite cost
_TINY = 2.2250738585072014e-308


@numba.njit(cache=True, inline="always")
def _softplus_sigmoid(s: float) -> tuple[float, float]:
    """(log(1 + e^s), 1 / (1 + e^-s)) without overflow, from one exponential."""
    e = math.exp(-abs(s))
    if s >= 0.0:
        return s + math.log1p(e), 1.0 / (1.0 + e)
    return math.log1p(e), e / (1.0 + e)


@numba.njit(cache=True, inline="always")
def triplet_loss(code: int, param: float, a: float, b: float) -> tuple[float, float, float]:
    """(L, dL/da, dL/db) of one triplet with squared distances a = d_ij^2, b = d_il^2."""
    if code == GNMDS:
        slack = 1.0 + a - b
        if slack > 0.0:
            return slack, 1.0, -1.0
        return 0.0, 0.0, 0.0
    if code == CKL:
        num = max(b + param, _TINY)
        den = max(a + b + 2.0 * param, _TINY)
        return math.log(den) - math.log(num), 1.0 / den, 1.0 / den - 1.0 / num
    if code == STE:
        loss, w = _softplus_sigmoid(a - b)
        return loss, w, -w
    # t-STE: -log p = log(1 + r^h) = softplus(h log r), r = (alpha + a) / (alpha + b) and
    # h = (alpha + 1) / 2, since q(b) / q(a) = r^h; dL/da = sigmoid(h log r) h / (alpha + a)
    alpha = param
    half = 0.5 * (alpha + 1.0)
    r = (alpha + a) / (alpha + b)
    if half == 1.0:  # alpha = 1, the 2-D default: r^h = r, no exp/log needed
        loss, w = math.log1p(r), r / (1.0 + r)
    else:
        loss, w = _softplus_sigmoid(half * math.log(r))
    return loss, w * half / (alpha + a), -w * half / (alpha + b)


@numba.njit(cache=True, inline="always")
def objective_term(
    code: int, param: float, use_log: bool, a: float, b: float
) -> tuple[float, float, float]:
    """(L, dL/da, dL/db) of one triplet's term of the objective: L = -log p when ``use_log``
    (the hinge for GNMDS), else L = -p = -exp(log p), whose derivatives are p times those of
    -log p (the sum-of-probabilities objective; meaningful for the probabilistic losses)."""
    loss, ga, gb = triplet_loss(code, param, a, b)
    if use_log:
        return loss, ga, gb
    p = math.exp(-loss)
    return -p, p * ga, p * gb


@numba.njit(cache=True, inline="always")
def _sq_dists(Z: np.ndarray, i: int, j: int, l: int, gram: bool) -> tuple[float, float]:
    """(d_ij^2, d_il^2) from coordinates Z = X, or from a Gram matrix Z = K when ``gram``."""
    if gram:
        a = Z[i, i] + Z[j, j] - Z[i, j] - Z[j, i]
        b = Z[i, i] + Z[l, l] - Z[i, l] - Z[l, i]
        return a, b
    a = 0.0
    b = 0.0
    for k in range(Z.shape[1]):
        u = Z[i, k] - Z[j, k]
        v = Z[i, k] - Z[l, k]
        a += u * u
        b += v * v
    return a, b


@numba.njit(parallel=True, cache=True)
def sq_dists(Z: np.ndarray, triplets: np.ndarray, gram: bool) -> tuple[np.ndarray, np.ndarray]:
    """a_t = d_ij^2 and b_t = d_il^2 of every triplet t = (i, j, l), from coordinates Z = X
    (||x_i - x_j||^2) or, when ``gram``, from a Gram matrix Z = K (k_ii + k_jj - k_ij - k_ji)."""
    m = triplets.shape[0]
    a = np.empty(m)
    b = np.empty(m)
    for t in numba.prange(m):
        a[t], b[t] = _sq_dists(Z, triplets[t, 0], triplets[t, 1], triplets[t, 2], gram)
    return a, b


@numba.njit(parallel=True, cache=True)
def coords_cost_grad(
    code: int, param: float, X: np.ndarray, triplets: np.ndarray, use_log: bool
) -> tuple[float, np.ndarray]:
    """C = sum_t L(a_t, b_t) and dC/dX for coordinates X (n x dims), in one pass; L is
    :func:`objective_term`'s (-log p when ``use_log``, else -p).

    Triplet t = (i, j, l) adds 2 L_a (x_i - x_j) + 2 L_b (x_i - x_l) to row i,
    -2 L_a (x_i - x_j) to row j and -2 L_b (x_i - x_l) to row l.
    """
    n, dims = X.shape
    m = triplets.shape[0]
    buf = np.zeros((N_CHUNKS, n, dims))
    cost = np.zeros(N_CHUNKS)
    for c in numba.prange(N_CHUNKS):
        G = buf[c]
        total = 0.0
        for t in range(c * m // N_CHUNKS, (c + 1) * m // N_CHUNKS):
            i, j, l = triplets[t, 0], triplets[t, 1], triplets[t, 2]
            a, b = _sq_dists(X, i, j, l, False)
            loss, ga, gb = objective_term(code, param, use_log, a, b)
            total += loss
            if ga == 0.0 and gb == 0.0:
                continue
            wa = 2.0 * ga
            wb = 2.0 * gb
            for k in range(dims):
                u = wa * (X[i, k] - X[j, k])
                v = wb * (X[i, k] - X[l, k])
                G[i, k] += u + v
                G[j, k] -= u
                G[l, k] -= v
        cost[c] = total
    grad = np.empty((n, dims))
    for p in numba.prange(n):
        for k in range(dims):
            s = 0.0
            for c in range(N_CHUNKS):
                s += buf[c, p, k]
            grad[p, k] = s
    total = 0.0
    for c in range(N_CHUNKS):  # sequential (cost.sum() would become a threaded reduction)
        total += cost[c]
    return total, grad


@numba.njit(parallel=True, cache=True)
def triplet_terms(
    code: int, param: float, Z: np.ndarray, triplets: np.ndarray, gram: bool, use_log: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-triplet terms and derivatives (L_t, dL/da_t, dL/db_t) of loss ``code``
    (:func:`objective_term`: -log p when ``use_log``, else -p) at the squared distances of
    coordinates Z = X, or of a Gram matrix Z = K when ``gram``."""
    m = triplets.shape[0]
    loss = np.empty(m)
    ga = np.empty(m)
    gb = np.empty(m)
    for t in numba.prange(m):
        a, b = _sq_dists(Z, triplets[t, 0], triplets[t, 1], triplets[t, 2], gram)
        loss[t], ga[t], gb[t] = objective_term(code, param, use_log, a, b)
    return loss, ga, gb


def incidence(triplets: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR list of the triplet slots of each point: slots[indptr[p]:indptr[p+1]] = 3 t + role.

    role 0, 1, 2 means that p is the i, j or l of triplet t.
    """
    flat = np.ascontiguousarray(triplets, dtype=np.int64).ravel()
    slots = np.argsort(flat, kind="stable").astype(np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(flat, minlength=n), out=indptr[1:])
    return indptr, slots


@numba.njit(parallel=True, cache=True)
def gather_grad_gram(
    n: int,
    triplets: np.ndarray,
    indptr: np.ndarray,
    slots: np.ndarray,
    ga: np.ndarray,
    gb: np.ndarray,
    one_sided: bool,
) -> np.ndarray:
    """dC/dK for C = sum_t L_t with a = k_ii + k_jj - k_ij - k_ji (and b alike with l).

    Row p holds dC/dk_pq; point p writes only its own row: as i it adds L_a + L_b to k_ii,
    -L_a to k_ij and -L_b to k_il; as j, L_a to k_jj and -L_a to k_ji; as l, L_b to k_ll and
    -L_b to k_li (symmetric).

    ``one_sided`` is the weighting of the authors' released K-form gradients, which read
    a = k_ii + k_jj - 2 k_ij off K's upper entry: the whole -2 L_a goes to k_ij and -2 L_b to
    k_il, nothing to k_ji and k_li. Its symmetric part is the symmetric gradient; the rest is
    antisymmetric.
    """
    G = np.zeros((n, n))
    off = 2.0 if one_sided else 1.0
    for p in numba.prange(n):
        for s in range(indptr[p], indptr[p + 1]):
            t = slots[s] // 3
            role = slots[s] - 3 * t
            i, j, l = triplets[t, 0], triplets[t, 1], triplets[t, 2]
            if role == 0:
                G[p, p] += ga[t] + gb[t]
                G[p, j] -= off * ga[t]
                G[p, l] -= off * gb[t]
            elif role == 1:
                G[p, p] += ga[t]
                if not one_sided:
                    G[p, i] -= ga[t]
            else:
                G[p, p] += gb[t]
                if not one_sided:
                    G[p, i] -= gb[t]
    return G
