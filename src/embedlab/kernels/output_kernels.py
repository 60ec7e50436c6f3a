"""The neighbour embeddings' output kernels: w(a, b), its log, its derivatives and its shift.

An embedding Y (n x d) has ``n_space`` space columns s and ``d - n_space`` time columns t.
For a pair (i, j), a = ||s_i - s_j||^2 and b = ||t_i - t_j||^2. An *output kernel* is an
unnormalised similarity w(a, b) > 0, given by ``log w`` and its negative partial derivatives
alpha = -d log w / da and beta = -d log w / db:

    kernel   w(a, b)            log w             alpha        beta
    SNE      exp(-a)            -a                1            0
    t-SNE    1 / (1 + a)        -log(1 + a)       1 / (1 + a)  0
    SNEST    exp(b) / (1 + a)   b - log(1 + a)    1 / (1 + a)  -1

(SNEST lives in the pseudo-Euclidean space R^{ds,dt}; with no time column it is t-SNE.)
A kernel is an integer id (``SNE``, ``TSNE``, ``SNEST``), a compile-time constant in the
compiled loops that call these functions (:mod:`embedlab.kernels.neighbour`,
:mod:`embedlab.kernels.neighbour_fft`), so the other kernels' branches cost nothing there.

The log-sum-exp shift c: an upper bound of log w over all pairs, computed in O(n d) by
:func:`log_weight_bound` (0 for SNE and t-SNE, whose log w <= 0; for SNEST the squared time
extent b_max = sum_k (max_i t_ik - min_i t_ik)^2). Every shifted weight w e^{-c}
(:func:`shifted_weight`) is then <= 1, so exp(b) cannot overflow however far apart the time
coordinates are, and for one time dimension the pair realising b_max keeps the largest term
>= 1 / (1 + a) (no underflow). Where the bound overshoots so far that the shifted weights
underflow, :func:`max_log_weight` gives the exact max (O(n^2)).

A new output kernel is a new branch in :func:`log_weight`, :func:`neg_dlog_weight_da`,
:func:`neg_dlog_weight_db`, :func:`shifted_weight` and :func:`log_weight_bound`, plus its
compiled entry points in :mod:`embedlab.kernels.neighbour` and its grid scale in
:mod:`embedlab.kernels.fft_repulsion`. The functions follow the precision of their argument
(``as_float_of``, :mod:`embedlab.kernels.fastmath`): one loop serves float64 and float32.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from embedlab.kernels.fastmath import FASTMATH, as_float_of, fast_exp, fast_reciprocal

SNE, TSNE, SNEST = 0, 1, 2
KERNEL_IDS = {"sne": SNE, "tsne": TSNE, "snest": SNEST}


@njit(inline="always", fastmath=FASTMATH)
def log_weight(kernel, a, b):
    """log w(a, b) of the output kernel (a, b: squared space and time distances)."""
    if kernel == SNE:
        return -a
    if kernel == TSNE:
        return -math.log1p(a)
    return b - math.log1p(a)


@njit(inline="always", fastmath=FASTMATH)
def neg_dlog_weight_da(kernel, a, b):
    """alpha = -d log w / da."""
    one = as_float_of(a, 1.0)
    if kernel == SNE:
        return one
    return fast_reciprocal(one + a)


@njit(inline="always", fastmath=FASTMATH)
def neg_dlog_weight_db(kernel, a, b):
    """beta = -d log w / db (0 for kernels without time)."""
    if kernel == SNEST:
        return as_float_of(a, -1.0)
    return as_float_of(a, 0.0)


@njit(inline="always")
def kernel_has_time(kernel):
    """Whether log w depends on b (a constant per compiled kernel: unused loops vanish)."""
    return kernel == SNEST


@njit(inline="always", fastmath=FASTMATH)
def shifted_weight(kernel, a, b, shift):
    """w(a, b) exp(-shift), computed without forming w (which may overflow)."""
    one = as_float_of(a, 1.0)
    if kernel == SNE:
        return fast_exp(-a - shift)
    if kernel == TSNE:
        return fast_exp(-shift) * fast_reciprocal(one + a)
    return fast_exp(b - shift) * fast_reciprocal(one + a)


def log_weight_bound(kernel: int, Y: np.ndarray, n_space: int) -> float:
    """An upper bound of log w over all pairs of ``Y`` (the log-sum-exp shift), O(n d)."""
    if kernel in (SNE, TSNE):
        return 0.0  # log w <= log w(0, 0) = 0
    T = Y[:, n_space:]
    if T.shape[1] == 0:
        return 0.0
    extent = T.max(axis=0) - T.min(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN: the caller reports it
        return float(extent @ extent)  # b <= b_max and log w <= b - log(1 + 0)


@njit(parallel=True, cache=True)
def max_log_weight(kernel, Y, n_space):
    """max_{i != j} log w_ij, exactly (O(n^2) with a log per pair: the rare fallback)."""
    n, d = Y.shape
    row_max = np.full(n, -np.inf)
    for i in prange(n):
        best = -np.inf
        for j in range(n):
            if j != i:
                a = 0.0
                b = 0.0
                for k in range(n_space):
                    a += (Y[i, k] - Y[j, k]) ** 2
                for k in range(n_space, d):
                    b += (Y[i, k] - Y[j, k]) ** 2
                best = max(best, log_weight(kernel, a, b))
        row_max[i] = best
    return row_max.max()
