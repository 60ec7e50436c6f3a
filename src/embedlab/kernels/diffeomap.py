"""Gaussian kernel matrices between two point sets and their derivative contraction.

For points A (m x a) and B (n x a):

    K_ji = k(a_j, b_i) = exp(-||a_j - b_i||^2 / (2 sigma^2))                     (m x n)

and, for a weight matrix W (m x n), the gradient of the contraction F = sum_ji W_ji K_ji
with respect to both point sets (C = W o K, the elementwise product):

    dF/da_j = -(1/sigma^2) sum_i C_ji (a_j - b_i) = -(1/sigma^2) (rowsum(C)_j a_j - (C B)_j)
    dF/db_i =  (1/sigma^2) sum_j C_ji (a_j - b_i) =  (1/sigma^2) ((C^T A)_i - colsum(C)_i b_i)

The kernel matrix is the pairwise loop (numba, parallel over rows of A). In low dimension
(a <= DIRECT_MAX_DIMS) the squared distances come from explicit coordinate differences, so
that k(x, x) = 1 exactly and close pairs lose no precision; in high dimension (USPS: 256,
NIPS: 1739) from ||a||^2 + ||b||^2 - 2 a.b with the inner products from one BLAS product,
which is far faster there (absolute error ~ 1e-16 ||x||^2 / sigma^2 in K). The contraction is
two matrix products plus elementwise work (BLAS), faster than any hand loop for it.
"""

from __future__ import annotations

import numba
import numpy as np

from embedlab.kernels.fastmath import FASTMATH, fast_exp64


def _gaussian_kernel_rows(A: np.ndarray, BT: np.ndarray, scale: float) -> np.ndarray:
    """K_ji = exp(-scale ||a_j - b_i||^2), with B given transposed (a x n) for unit strides."""
    m, dims = A.shape
    n = BT.shape[1]
    K = np.empty((m, n))
    for j in numba.prange(m):
        sq = np.zeros(n)
        for d in range(dims):
            x = A[j, d]
            for i in range(n):
                t = x - BT[d, i]
                sq[i] += t * t
        for i in range(n):
            K[j, i] = fast_exp64(-scale * sq[i])
    return K


def _gaussian_kernel_from_products(
    G: np.ndarray, sq_a: np.ndarray, sq_b: np.ndarray, scale: float
) -> np.ndarray:
    """K_ji = exp(-scale (|a_j|^2 + |b_i|^2 - 2 G_ji)) written over G = A B^T (distance >= 0)."""
    m, n = G.shape
    for j in numba.prange(m):
        for i in range(n):
            sq = sq_a[j] + sq_b[i] - 2.0 * G[j, i]
            G[j, i] = fast_exp64(-scale * max(sq, 0.0))
    return G


# each loop body compiled twice: threads only pay off above a few million operations (below
# that, waking the thread pool costs more than the loop)
_kernel_rows_serial = numba.njit(cache=True, fastmath=FASTMATH)(_gaussian_kernel_rows)
_kernel_rows_parallel = numba.njit(parallel=True, cache=True, fastmath=FASTMATH)(
    _gaussian_kernel_rows
)
_kernel_products_serial = numba.njit(cache=True, fastmath=FASTMATH)(
    _gaussian_kernel_from_products
)
_kernel_products_parallel = numba.njit(parallel=True, cache=True, fastmath=FASTMATH)(
    _gaussian_kernel_from_products
)
PARALLEL_MIN_WORK = 2_000_000  # m * n * dims
DIRECT_MAX_DIMS = 64


def gaussian_kernel(A: np.ndarray, B: np.ndarray, sigma: float) -> np.ndarray:
    """K (m x n), K_ji = exp(-||a_j - b_i||^2 / (2 sigma^2)), in float64."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    scale = 0.5 / (sigma * sigma)
    parallel = A.shape[0] * B.shape[0] * A.shape[1] >= PARALLEL_MIN_WORK
    if A.shape[1] <= DIRECT_MAX_DIMS:
        rows = _kernel_rows_parallel if parallel else _kernel_rows_serial
        return rows(A, np.ascontiguousarray(B.T), scale)
    products = _kernel_products_parallel if parallel else _kernel_products_serial
    return products(A @ B.T, np.einsum("ij,ij->i", A, A), np.einsum("ij,ij->i", B, B), scale)


def gaussian_kernel_vjp(
    W: np.ndarray, K: np.ndarray, A: np.ndarray, B: np.ndarray, sigma: float
) -> tuple[np.ndarray, np.ndarray]:
    """(dF/dA, dF/dB) of F = sum_ji W_ji K_ji with K = gaussian_kernel(A, B, sigma)."""
    C = W * K
    inv_s2 = 1.0 / (sigma * sigma)
    grad_A = inv_s2 * (C @ B - C.sum(axis=1)[:, None] * A)
    grad_B = inv_s2 * (C.T @ A - C.sum(axis=0)[:, None] * B)
    return grad_A, grad_B
