"""The CODE log-likelihood of co-occurrence counts and its gradient (D-CODE, eq. 1-2).

For authors ``phi_i`` (rows 0..A-1 of ``theta``) and words ``psi_j`` (rows A..A+W-1), the
empirical joint ``p_ij`` with marginals ``p_i``, ``p_j`` and ``d_ij = ||phi_i - psi_j||^2``::

    L = -sum_ij p_ij d_ij - log Z,        Z = sum_ij p_i p_j exp(-d_ij)               (2)
    dL/dphi_i =  sum_j c_ij (phi_i - psi_j),  dL/dpsi_j = -sum_i c_ij (phi_i - psi_j),
    c_ij = 2 (q_ij - p_ij),               q_ij = p_i p_j exp(-d_ij) / Z.

``log Z`` by log-sum-exp (shifted by the largest ``log p_i + log p_j - d_ij``), so far-apart
positions, whose ``exp(-d)`` underflows, stay finite. The D-CODE filter's mode search calls
this thousands of times per year on A x W ~ 1e4 pairs: three passes over the pairs (numba,
parallel over authors, then over words for the word gradient), float64 throughout.
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(parallel=True, cache=True)
def _log_likelihood_and_gradient(theta, p_joint, log_pa, log_pw, grad):
    A, W = p_joint.shape
    k = theta.shape[1]
    log_q = np.empty((A, W))
    row_max = np.full(A, -np.inf)
    row_fit = np.zeros(A)  # sum_j p_ij d_ij per author
    for i in numba.prange(A):
        for j in range(W):
            d = 0.0
            for c in range(k):
                t = theta[i, c] - theta[A + j, c]
                d += t * t
            row_fit[i] += p_joint[i, j] * d
            v = log_pa[i] + log_pw[j] - d
            log_q[i, j] = v
            if v > row_max[i]:
                row_max[i] = v
    shift = row_max.max()
    row_sum = np.zeros(A)
    for i in numba.prange(A):
        for j in range(W):
            row_sum[i] += math.exp(log_q[i, j] - shift)
    log_z = shift + math.log(row_sum.sum())
    coef = np.empty((A, W))
    for i in numba.prange(A):
        for c in range(k):
            grad[i, c] = 0.0
        for j in range(W):
            cij = 2.0 * (math.exp(log_q[i, j] - log_z) - p_joint[i, j])
            coef[i, j] = cij
            for c in range(k):
                grad[i, c] += cij * (theta[i, c] - theta[A + j, c])
    for j in numba.prange(W):
        for c in range(k):
            grad[A + j, c] = 0.0
        for i in range(A):
            for c in range(k):
                grad[A + j, c] -= coef[i, j] * (theta[i, c] - theta[A + j, c])
    return -row_fit.sum() - log_z


def log_likelihood_and_gradient(theta: np.ndarray, p_joint: np.ndarray):
    """``(L, dL/dtheta)`` of eq. (2) for positions ``theta`` ((A+W) x k) and joint ``p_joint``."""
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    p_joint = np.ascontiguousarray(p_joint, dtype=np.float64)
    if theta.ndim != 2 or theta.shape[0] != sum(p_joint.shape):
        raise ValueError(f"theta must be ({sum(p_joint.shape)}, k), got {theta.shape}")
    with np.errstate(divide="ignore"):
        log_pa, log_pw = np.log(p_joint.sum(axis=1)), np.log(p_joint.sum(axis=0))
    grad = np.empty_like(theta)
    value = _log_likelihood_and_gradient(theta, p_joint, log_pa, log_pw, grad)
    return float(value), grad
