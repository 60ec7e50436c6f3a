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

:func:`full_flow_energy` is the whole full-set span energy and its gradient (every point a
basis function), block by block of rows; given a buffer (:func:`flow_kernel_buffer`, sized by
a byte budget, FLOW_STORE_BYTES), the forward pass keeps its m x m kernel matrices there for
the reverse pass, which recomputes the others.
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


# ----------------------------------------------------------------------------- full-set flow


#: rows j per block of the full-set flow: a block's m-column matrices (~2.8 MB at m = 2700)
#: stay in cache between the BLAS product that makes them and the next that reads them
FLOW_BLOCK_ROWS = 128


def _flow_weights(A, S, sq_rows, sq_cols, scale, csum):
    """In place, for a block of rows j against every column i (parallel over rows):

        A_ji <- K_ji = exp(-scale max(|a_j|^2 + |a_i|^2 - 2 A_ji, 0)),   A = Phi_blk Phi^T,
        S_ji <- C_ji = K_ji S_ji,   csum_j = sum_i C_ji  (float64 accumulation).
    """
    b, m = A.shape
    for j in numba.prange(b):
        acc = 0.0
        for i in range(m):
            k = fast_exp64(-scale * max(sq_rows[j] + sq_cols[i] - 2.0 * A[j, i], 0.0))
            A[j, i] = k
            c = k * S[j, i]
            S[j, i] = c
            acc += c
        csum[j] = acc


_weights_serial = numba.njit(cache=True, fastmath=FASTMATH)(_flow_weights)
_weights_parallel = numba.njit(parallel=True, cache=True, fastmath=FASTMATH)(_flow_weights)


def _flow_weights_stored(K, S, csum):
    """:func:`_flow_weights` with the kernel block K_ji given (kept from the forward pass):

        S_ji <- C_ji = K_ji S_ji,   csum_j = sum_i C_ji  (float64 accumulation),

    the same multiplications and the same sum in the same order (no reassociation), so C and
    csum are bitwise those of :func:`_flow_weights` when K is bitwise its exponential.
    """
    b, m = K.shape
    for j in numba.prange(b):
        acc = 0.0
        for i in range(m):
            c = K[j, i] * S[j, i]
            S[j, i] = c
            acc += c
        csum[j] = acc


_stored_serial = numba.njit(cache=True, fastmath=FASTMATH)(_flow_weights_stored)
_stored_parallel = numba.njit(parallel=True, cache=True, fastmath=FASTMATH)(
    _flow_weights_stored
)

#: bytes of kernel matrices K_k (m^2 float64 each) that a :func:`flow_kernel_buffer` holds for
#: :func:`full_flow_energy` to keep from its forward pass for the reverse pass: 2 GiB holds
#: every step of the default run's full-set fits (vowel m = 2700, p = 20: 1.17 GB; USPS
#: m = 3000, p = 5: 0.36 GB; NIPS text m = 1740, p = 20: 0.48 GB); a larger problem keeps as
#: many steps as fit and recomputes the rest
FLOW_STORE_BYTES = 2 * 1024**3


def stored_flow_steps(m: int, p: int, store_bytes: int | None = None) -> int:
    """How many of the p steps' kernel matrices (m x m float64) fit in ``store_bytes``
    (None: FLOW_STORE_BYTES)."""
    budget = FLOW_STORE_BYTES if store_bytes is None else store_bytes
    return min(p, max(int(budget), 0) // (8 * m * m))


def flow_kernel_buffer(m: int, p: int, store_bytes: int | None = None) -> np.ndarray:
    """An uninitialised (s, m, m) float64 array, s = :func:`stored_flow_steps`, for
    :func:`full_flow_energy`'s ``kernels``. The evaluations of one fit share it: a fresh
    allocation per evaluation pays the operating system's first-touch page faults (zeroing
    s m^2 floats) every time, which on a loaded machine cost more than the reuse saves
    (benchmarks/README.md)."""
    return np.empty((stored_flow_steps(m, p, store_bytes), m, m))


def full_flow_energy(
    Z: np.ndarray,
    beta: np.ndarray,
    sigma: float,
    lam: float,
    n_components: int,
    kernels: np.ndarray | None = None,
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """The full-set span energy (every point a basis function) and dE/dbeta, fused by row block.

        Phi_0 = Z,  Phi_{k+1} = Phi_k + h K_k beta_k,  h = 1/p,  K_k = K(Phi_k, Phi_k),
        E = sum_{k<p} h tr(beta_k^T K_k beta_k) + lam sum_j sum_{d>=b} Phi_p[j, d]^2

    (the paper's eq. 13 with V_k = K_k beta_k, so tr(V_k^T K_k^-1 V_k) = tr(beta_k^T K_k beta_k)).
    Reverse mode, G = dE/dPhi_{k+1}, H = G + beta_k (K symmetric):

        dE/dbeta_k = h K_k (G + 2 beta_k),
        dE/dPhi_k  = G - (1/sigma^2) h (rowsum(C) o Phi_k - C Phi_k),
        C = K_k o S,  S_ji = H_j . beta_i + beta_j . H_i  (= [H, beta] [beta, H]^T).

    Returns (kinetic, off_subspace, dE/dbeta (p, m, r), trajectories (p + 1, m, r)); E =
    kinetic + lam off_subspace: the quantity of
    :func:`embedlab.methods.diffeomap_energy.span_energy` with I = every point. Design: every
    m x m matrix is made and used one block of FLOW_BLOCK_ROWS rows at a time; its O(m^2 r)
    products per block are BLAS (the Gram matrix Phi_blk Phi^T for the distances, K beta
    forward; S, K Q and C Phi in reverse), and the elementwise work between them is one numba
    pass (:func:`_flow_weights`). Distances from the Gram matrix carry an absolute error
    ~1e-16 |phi|^2 / sigma^2 in the exponent.

    Kernel reuse: ``kernels``, an (s, m, m) float64 C-contiguous buffer with s <= p
    (:func:`flow_kernel_buffer`: s m^2 floats, 1.17 GB at vowel's m = 2700, p = 20; its
    contents on entry are not read), receives K_k of the first s steps in the forward pass,
    and the reverse pass reads them instead of recomputing the Gram matrix and the exponential
    (:func:`_flow_weights_stored`). Steps k >= s, and every step without ``kernels``, are
    recomputed, in O(p m r) memory. The recomputation is the forward pass's own float
    operations (the same BLAS product of the same operands, the same compiled expression of
    the exponent), so both ways give bitwise the same K, energy and gradient
    (tests/test_diffeomap.py compares them with ``np.array_equal``).
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    p = beta.shape[0]
    m, r = Z.shape
    if beta.shape != (p, m, r):
        raise ValueError(f"beta must be (p, m, r) = (p, {m}, {r}), got {beta.shape}")
    scale = 0.5 / (sigma * sigma)
    h = 1.0 / p
    parallel = FLOW_BLOCK_ROWS * m >= PARALLEL_MIN_WORK // 8
    kernel = _kernel_products_parallel if parallel else _kernel_products_serial
    weights = _weights_parallel if parallel else _weights_serial
    stored_weights = _stored_parallel if parallel else _stored_serial
    blocks = [slice(j, min(j + FLOW_BLOCK_ROWS, m)) for j in range(0, m, FLOW_BLOCK_ROWS)]
    if kernels is None:
        kernels = np.empty((0, m, m))
    elif not (
        kernels.dtype == np.float64 and kernels.flags.c_contiguous
        and kernels.ndim == 3 and kernels.shape[0] <= p and kernels.shape[1:] == (m, m)
    ):  # fmt: skip
        raise ValueError(f"kernels must be float64 C-contiguous (s <= {p}, {m}, {m}), got "
                         f"{kernels.dtype} {kernels.shape}")  # fmt: skip
    stored = len(kernels)
    T = np.empty((p + 1, m, r))
    T[0] = Z
    kinetic = 0.0
    for k in range(p):
        Phi = T[k]
        sq = np.einsum("ij,ij->i", Phi, Phi)
        for b in blocks:
            if k < stored:  # the Gram block written where K_k's rows are kept, then K in place
                K = kernel(np.matmul(Phi[b], Phi.T, out=kernels[k, b]), sq[b], sq, scale)
            else:
                K = kernel(Phi[b] @ Phi.T, sq[b], sq, scale)
            V = K @ beta[k]
            T[k + 1][b] = Phi[b] + h * V
            kinetic += h * float(np.sum(beta[k][b] * V))
    off = T[p][:, n_components:]
    off_subspace = float(np.sum(off * off))
    G = np.zeros((m, r))
    G[:, n_components:] = 2.0 * lam * off
    grad = np.empty_like(beta)
    for k in reversed(range(p)):
        Phi = T[k]
        sq = np.einsum("ij,ij->i", Phi, Phi)
        H = G + beta[k]
        left = np.hstack([H, beta[k]])
        right = np.hstack([beta[k], H])
        Q = H + beta[k]
        G_prev = np.empty((m, r))
        for b in blocks:
            C = left[b] @ right.T
            csum = np.empty(len(C))
            if k < stored:
                A = kernels[k, b]
                stored_weights(A, C, csum)
            else:
                A = Phi[b] @ Phi.T
                weights(A, C, sq[b], sq, scale, csum)
            grad[k][b] = h * (A @ Q)
            if k > 0:  # Phi_0 is the data: no gradient needed
                G_prev[b] = G[b] - (2.0 * scale * h) * (Phi[b] * csum[:, None] - C @ Phi)
        G = G_prev
    return kinetic, off_subspace, grad, T
