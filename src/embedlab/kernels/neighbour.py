"""The exact O(n^2) neighbour-embedding kernel: one pair loop, output kernels as functions.

An embedding Y (n x d) has ``n_space`` space columns s and ``d - n_space`` time columns t.
For a pair (i, j), a = ||s_i - s_j||^2 and b = ||t_i - t_j||^2. An *output kernel* is an
unnormalised similarity w(a, b) > 0, given by ``log w`` and its negative partial derivatives
alpha = -d log w / da and beta = -d log w / db:

    kernel   w(a, b)            log w             alpha        beta
    SNE      exp(-a)            -a                1            0
    t-SNE    1 / (1 + a)        -log(1 + a)       1 / (1 + a)  0
    SNEST    exp(b) / (1 + a)   b - log(1 + a)    1 / (1 + a)  -1

(SNEST lives in the pseudo-Euclidean space R^{ds,dt}; with no time column it is t-SNE.)

For a sparse non-negative P (CSR) and optional dense symmetric repulsive weights V (default:
all ones), one call of :func:`pair_fields` computes, in one parallel pass over the pairs:

    attraction cost   C_att = sum_{(i,j) in nnz(P)} p_ij (-log w_ij)
    attraction field  A_i   = sum_{j in nnz(P_i)} p_ij D_ij
    repulsion mass    M     = sum_{i != j} v_ij w_ij e^{-c}
    repulsion field   R_i   = sum_{j != i} v_ij w_ij e^{-c} D_ij
    with the pair direction D_ij = (alpha_ij (s_i - s_j), beta_ij (t_i - t_j)).

The attraction loops over the non-zeros of row i only. The repulsion is dense and symmetric
(w_ij = w_ji, D_ij = -D_ji): each unordered pair i < j is evaluated once, its force added to
row i and subtracted from row j. Parallel work units are fixed groups of rows, each group
collecting its forces on other rows in its own slab; the slabs are summed in a fixed order,
so the result is bitwise the same whatever the number of threads or their schedule, and no
two threads write the same memory. Within a row, columns j go in blocks of ``BLOCK`` through
three simple loops (squared distances, weights, forces) that LLVM vectorises (AVX2).
``c`` (``shift``) is a log-sum-exp shift: an upper bound of log w over all pairs, computed in
O(n d) by :func:`log_weight_bound` (0 for SNE and t-SNE, whose log w <= 0; for SNEST the
squared time extent b_max = sum_k (max_i t_ik - min_i t_ik)^2). Every shifted weight is then
<= 1, so exp(b) cannot overflow however far apart the time coordinates are, and for one time
dimension the pair realising b_max keeps the largest term >= 1 / (1 + a) (no underflow).

Costs are built from these four quantities without touching the loop (all sums are over
ordered pairs; P is symmetric, so each unordered pair appears twice):

* KL(P || Q), q_ij = w_ij / Z, Z = sum_{i != j} w_ij = M e^c (``NeighbourKL`` in
  :mod:`embedlab.methods.neighbour`):
      KL = sum p log p + C_att + log M + c,     dKL/dy_i = 4 (A_i - R_i / M).
  The factor 4 = 2 (pair counted as (i, j) and (j, i)) x 2 (da/ds_i = 2 (s_i - s_j)).
  The SNEST paper (eq. 8-10) sums over i < j with p normalised over unordered pairs, i.e.
  p_paper = 2 p_ours: the KL value is the same and its gradient factor 2 is our 4.
  Early exaggeration scales the attraction: grad = 4 (e A_i - R_i / M).
* Elastic Embedding (future), E = sum v+_ij d_ij^2 + lambda sum v-_ij exp(-d_ij^2): call
  :func:`pair_fields` with the SNE kernel, P = V+ (sparse) and ``rep_weights`` = V- (dense, or
  empty for uniform weights), shift 0; then E = C_att + lambda M and dE/dy_i = 4 (A_i - lambda
  R_i). Adding EE is adding that cost function (a few lines of numpy), not another loop.

A new output kernel is a new branch in :func:`log_weight`, :func:`neg_dlog_weight_da`,
:func:`neg_dlog_weight_db`, :func:`shifted_weight` and :func:`log_weight_bound`, plus a
one-line compiled entry point (numba specialises the one loop per kernel id, so the id is a
compile-time constant and the branches cost nothing; closures from a factory would not be
cached on disk, hence the explicit entry points).

Numerics: float64 throughout; ``fastmath`` is restricted to contraction (FMA), reciprocals and
signed zeros (no ``nnan``/``ninf``), so NaN and inf propagate and are reported by the caller.
No reassociation: every sum over j is accumulated elementwise in per-column lanes and added
up in a fixed order, so the bits are the same for any thread count, schedule, and for a fresh
or a cached compile (with ``reassoc`` the two compiles vectorised a sum differently, and
runs on NIPS17 differed from the 4th digit on). In the dense loop
exp and 1/x are :func:`fast_exp` and :func:`fast_reciprocal`, branch-free float64 routines
that LLVM vectorises (libm's exp is not vectorised without SVML, and LLVM's cost model keeps
a loop with a division scalar on this CPU); both are accurate to about 1 ulp (exp: 3e-14
relative at |x| ~ 700, where such weights no longer matter).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

SNE, TSNE, SNEST = 0, 1, 2
KERNEL_IDS = {"sne": SNE, "tsne": TSNE, "snest": SNEST}

# NaN/inf must survive optimisation (no nnan/ninf). No reassociation either: LLVM vectorises
# a reassociated sum differently in a fresh and in a cached compile (different bits, and an
# optimisation run that diverges in the 4th digit); sums go through lanes (_repulsion_row).
FASTMATH = {"contract", "arcp", "nsz"}
BLOCK = 256  # columns j handled per inner block (fits L1 with its two buffers)
GROUPS = 16  # row groups, each with its own scatter slab (d x n): the unit of parallel work
SERIAL_BELOW = 256  # rows: below this, a serial entry point beats the thread start-up cost

# --------------------------------------------------------------------------------------
# vectorisable exp and 1/x (float64, branch-free)


@intrinsic
def _bits_as_float64(typingctx, bits):
    """Reinterpret the bits of an int64 as a float64 (no conversion)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _float64_bits(typingctx, value):
    """Reinterpret the bits of a float64 as an int64 (no conversion)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471806019545  # ln 2 rounded to 32 significant bits: k * _LN2_HI is exact
_LN2_LO = -4.2009150726810846e-11  # ln 2 - _LN2_HI
_ROUND_SHIFTER = 6755399441055744.0  # 1.5 * 2^52: k + shifter holds the integer k in its bits
_EXP_MIN = -708.0  # below this exp(x) is subnormal; returned as 0
_EXP_MAX = 709.0  # above this 2^k overflows; returned as inf
_C = [1.0 / math.factorial(i) for i in range(14)]  # Taylor coefficients of exp
_C0, _C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _C


@njit(inline="always", fastmath=FASTMATH)
def fast_exp(x):
    """exp(x) = 2^k exp(r), k = round(x / ln 2), |r| <= ln(2) / 2; exp(r) by its Taylor
    polynomial of degree 13 (truncation < 2e-17) in Estrin's form (short dependency chains);
    2^k built from its bits. Branch-free, so LLVM vectorises it. Relative error < 1e-15 for
    |x| < 10, < 3e-14 up to |x| = 708; 0 below -708, inf above 709, NaN for NaN."""
    k = math.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    r2 = r * r
    r4 = r2 * r2
    q0 = (_C0 + _C1 * r) + (_C2 + _C3 * r) * r2
    q1 = (_C4 + _C5 * r) + (_C6 + _C7 * r) * r2
    q2 = (_C8 + _C9 * r) + (_C10 + _C11 * r) * r2
    q3 = _C12 + _C13 * r
    poly = (q0 + q1 * r4) + (q2 + q3 * r4) * (r4 * r4)
    value = poly * _bits_as_float64((_float64_bits(k + _ROUND_SHIFTER) + 1023) << 52)
    if x < _EXP_MIN:
        value = 0.0
    if x > _EXP_MAX:
        value = np.inf
    return value


# bits(1/x) ~ C - bits(x): C = 2 bits(1) = 0x7FE0000000000000 negates the exponent and
# mirrors the mantissa (error <= 1/8); this C, found by scanning C below 2 bits(1) for the
# smallest max |1 - x y0| over two binades, brings the error down to 5.1% (4.3 bits).
_RECIPROCAL_START = 0x7FDE65FD8ADAB9F6


@njit(inline="always", fastmath=FASTMATH)
def fast_reciprocal(x):
    """1 / x for a finite normal x > 0, branch-free so that LLVM vectorises it (its cost model
    keeps loops with a true division scalar on this CPU). Start from the bit pattern
    _RECIPROCAL_START - bits(x) (relative error <= 0.052); each Newton step
    y <- y (2 - x y) squares the error: 0.052 -> 2.6e-3 -> 6.9e-6 -> 4.7e-11 -> 2.2e-21,
    i.e. 1 ulp after rounding. Non-finite x gives NaN (reported upstream as divergence)."""
    y = _bits_as_float64(_RECIPROCAL_START - _float64_bits(x))
    y = y * (2.0 - x * y)
    y = y * (2.0 - x * y)
    y = y * (2.0 - x * y)
    y = y * (2.0 - x * y)
    return y


# --------------------------------------------------------------------------------------
# output kernels: log w(a, b) and its derivatives


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
    if kernel == SNE:
        return 1.0
    return fast_reciprocal(1.0 + a)


@njit(inline="always", fastmath=FASTMATH)
def neg_dlog_weight_db(kernel, a, b):
    """beta = -d log w / db (0 for kernels without time)."""
    if kernel == SNEST:
        return -1.0
    return 0.0


@njit(inline="always")
def kernel_has_time(kernel):
    """Whether log w depends on b (a constant per compiled kernel: unused loops vanish)."""
    return kernel == SNEST


@njit(inline="always", fastmath=FASTMATH)
def shifted_weight(kernel, a, b, shift):
    """w(a, b) exp(-shift), computed without forming w (which may overflow)."""
    if kernel == SNE:
        return fast_exp(-a - shift)
    if kernel == TSNE:
        return fast_exp(-shift) * fast_reciprocal(1.0 + a)
    return fast_exp(b - shift) * fast_reciprocal(1.0 + a)


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


# --------------------------------------------------------------------------------------
# the one pair loop


@njit(inline="always", fastmath=FASTMATH)
def _attraction_row(kernel, i, Y, n_space, indptr, indices, pvals, att):
    """Add A_i to ``att[i]``; return sum_{j in nnz(P_i)} p_ij (-log w_ij)."""
    d = Y.shape[1]
    cost = 0.0
    for idx in range(indptr[i], indptr[i + 1]):
        j = indices[idx]
        p = pvals[idx]
        a = 0.0
        b = 0.0
        for k in range(n_space):
            a += (Y[i, k] - Y[j, k]) ** 2
        if kernel_has_time(kernel):
            for k in range(n_space, d):
                b += (Y[i, k] - Y[j, k]) ** 2
        cost -= p * log_weight(kernel, a, b)
        pa = p * neg_dlog_weight_da(kernel, a, b)
        pb = p * neg_dlog_weight_db(kernel, a, b)
        for k in range(n_space):
            att[i, k] += pa * (Y[i, k] - Y[j, k])
        if kernel_has_time(kernel):
            for k in range(n_space, d):
                att[i, k] += pb * (Y[i, k] - Y[j, k])
    return cost


@njit(inline="always", fastmath=FASTMATH)
def _ordered_sum(x, m):
    """x[0] + ... + x[m-1] in a fixed order (four interleaved partial sums, then combined),
    so the result is the same bits whatever LLVM does to the rest of the loop."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    m4 = m - m % 4
    for j in range(0, m4, 4):
        s0 += x[j]
        s1 += x[j + 1]
        s2 += x[j + 2]
        s3 += x[j + 3]
    for j in range(m4, m):
        s0 += x[j]
    return (s0 + s1) + (s2 + s3)


@njit(inline="always", fastmath=FASTMATH)
def _repulsion_row(kernel, i, Yt, n_space, v_row, shift, buf, lanes, rep, scatter):
    """Pairs (i, j > i): add their forces on i to ``rep[i]`` and their forces on j
    (opposite sign) to ``scatter[:, j]``; return sum_{j > i} v_ij w_ij e^{-c}.

    The sums over j are accumulated elementwise in ``lanes`` (row 0: mass, row 1 + k: force
    along coordinate k; lane l collects columns j = l mod BLOCK) and only then added up in a
    fixed order: elementwise loops vectorise without reassociation, so the bits do not
    depend on how LLVM vectorises (which differs between a fresh and a cached compile)."""
    d, n = Yt.shape
    width = min(BLOCK, n - i - 1)
    lanes[:, :width] = 0.0
    for j0 in range(i + 1, n, BLOCK):
        m = min(BLOCK, n - j0)
        wa = buf[0, :m]  # a, then w alpha
        wb = buf[1, :m]  # b, then w beta
        wa[:] = 0.0
        for k in range(n_space):
            yik = Yt[k, i]
            yk = Yt[k, j0 : j0 + m]
            for j in range(m):
                wa[j] += (yik - yk[j]) ** 2
        if kernel_has_time(kernel):
            wb[:] = 0.0
            for k in range(n_space, d):
                yik = Yt[k, i]
                yk = Yt[k, j0 : j0 + m]
                for j in range(m):
                    wb[j] += (yik - yk[j]) ** 2
        mass_lane = lanes[0, :m]
        for j in range(m):
            a = wa[j]
            b = wb[j] if kernel_has_time(kernel) else 0.0
            wj = shifted_weight(kernel, a, b, shift) * v_row[j0 + j]
            mass_lane[j] += wj
            wa[j] = wj * neg_dlog_weight_da(kernel, a, b)
            if kernel_has_time(kernel):
                wb[j] = wj * neg_dlog_weight_db(kernel, a, b)
        for k in range(d):
            if k >= n_space and not kernel_has_time(kernel):
                break
            coef = wa if k < n_space else wb
            yik = Yt[k, i]
            yk = Yt[k, j0 : j0 + m]
            out = scatter[k, j0 : j0 + m]
            force_lane = lanes[1 + k, :m]
            for j in range(m):
                force = coef[j] * (yik - yk[j])
                force_lane[j] += force
                out[j] -= force
    for k in range(d):
        if k >= n_space and not kernel_has_time(kernel):
            break
        rep[i, k] += _ordered_sum(lanes[1 + k], width)
    return _ordered_sum(lanes[0], width)


@njit(inline="always", fastmath=FASTMATH)
def _pair_fields(kernel, Y, n_space, indptr, indices, pvals, rep_weights, shift):
    """One pass over the unordered pairs i < j (each evaluated once). Rows are taken in pairs
    (r, n-1-r), which have n-1 pairs together, and the row pairs in GROUPS contiguous groups;
    group g owns the slab scatter[g] that collects the forces on j > i. The slabs are summed
    in a fixed order, so the result does not depend on the thread count or schedule."""
    n, d = Y.shape
    Yt = np.ascontiguousarray(Y.T)  # coordinate k of all points contiguous: SIMD over j
    ones = np.ones(n)
    att_cost_row = np.zeros(n)
    mass_row = np.zeros(n)
    att = np.zeros((n, d))
    rep = np.zeros((n, d))
    half = (n + 1) // 2  # row pairs; with n odd the middle row is alone
    groups = min(GROUPS, half)
    scatter = np.empty((groups, d, n))
    for g in prange(groups):
        scatter[g] = 0.0
        buf = np.empty((2, BLOCK))
        lanes = np.empty((d + 1, BLOCK))
        for r in range(g * half // groups, (g + 1) * half // groups):
            for side in range(2):
                i = r + side * (n - 1 - 2 * r)  # r, then n - 1 - r
                if side == 0 or i != r:  # the middle row of an odd n only once
                    att_cost_row[i] = _attraction_row(
                        kernel, i, Y, n_space, indptr, indices, pvals, att
                    )
                    v_row = rep_weights[i] if rep_weights.shape[0] > 0 else ones
                    mass_row[i] = 2.0 * _repulsion_row(
                        kernel, i, Yt, n_space, v_row, shift, buf, lanes, rep, scatter[g]
                    )
    # sequential sums in a fixed order (np.sum would become a thread-dependent reduction)
    att_cost = 0.0
    mass = 0.0
    for i in range(n):
        att_cost += att_cost_row[i]
        mass += mass_row[i]
    for g in range(groups):
        for k in range(d):
            for j in range(n):
                rep[j, k] += scatter[g, k, j]
    return att_cost, mass, att, rep


# One compiled entry point per (kernel, parallel): the kernel id is a constant inside, so
# numba/LLVM drop the other kernels' branches and vectorise the dense loop.

@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _fields_sne(Y, n_space, indptr, indices, pvals, rep_weights, shift):
    return _pair_fields(SNE, Y, n_space, indptr, indices, pvals, rep_weights, shift)


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _fields_tsne(Y, n_space, indptr, indices, pvals, rep_weights, shift):
    return _pair_fields(TSNE, Y, n_space, indptr, indices, pvals, rep_weights, shift)


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _fields_snest(Y, n_space, indptr, indices, pvals, rep_weights, shift):
    return _pair_fields(SNEST, Y, n_space, indptr, indices, pvals, rep_weights, shift)


@njit(cache=True, fastmath=FASTMATH)
def _fields_sne_serial(Y, n_space, indptr, indices, pvals, rep_weights, shift):
    return _pair_fields(SNE, Y, n_space, indptr, indices, pvals, rep_weights, shift)


@njit(cache=True, fastmath=FASTMATH)
def _fields_tsne_serial(Y, n_space, indptr, indices, pvals, rep_weights, shift):
    return _pair_fields(TSNE, Y, n_space, indptr, indices, pvals, rep_weights, shift)


@njit(cache=True, fastmath=FASTMATH)
def _fields_snest_serial(Y, n_space, indptr, indices, pvals, rep_weights, shift):
    return _pair_fields(SNEST, Y, n_space, indptr, indices, pvals, rep_weights, shift)


_ENTRY = {
    (SNE, True): _fields_sne,
    (TSNE, True): _fields_tsne,
    (SNEST, True): _fields_snest,
    (SNE, False): _fields_sne_serial,
    (TSNE, False): _fields_tsne_serial,
    (SNEST, False): _fields_snest_serial,
}
_NO_WEIGHTS = np.zeros((0, 0))
_MASS_UNDERFLOW = 1e-200  # a shifted mass this small means the shift overshot


@njit(parallel=True, cache=True)
def _max_log_weight(kernel, Y, n_space):
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


def csr_parts(P) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, data) of ``P`` as CSR with int64 indices and float64 values."""
    P = sp.csr_matrix(P, dtype=np.float64)
    P.sum_duplicates()
    return (P.indptr.astype(np.int64), P.indices.astype(np.int64), P.data)


class PairFields(NamedTuple):
    """The four sums of the module docstring, with the shift c they were computed with."""

    att_cost: float  # C_att = sum_nnz p_ij (-log w_ij)
    mass: float  # M = sum_{i != j} v_ij w_ij e^{-c}
    shift: float  # c
    att: np.ndarray  # A (n x d)
    rep: np.ndarray  # R (n x d)


def pair_fields(
    kernel: int,
    Y: np.ndarray,
    n_space: int,
    P_parts: tuple[np.ndarray, np.ndarray, np.ndarray],
    rep_weights: np.ndarray | None = None,
    parallel: bool | None = None,
) -> PairFields:
    """C_att, M, A, R of the module docstring for the embedding ``Y`` (n x d).

    ``P_parts`` from :func:`csr_parts`; ``rep_weights``: dense symmetric n x n V (None: all
    ones; only its upper triangle is read);
    ``parallel``: None chooses by size (serial below ``SERIAL_BELOW`` rows). The shift c is
    :func:`log_weight_bound`; when that bound overshoots so far that M underflows (possible
    only with several time dimensions, or SNE with all points > 26 apart), c is recomputed
    as the exact max of log w (one more O(n^2) pass) and the fields are recomputed. A
    non-finite M is returned as is: the caller reports the divergence.
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, d = Y.shape
    if not 0 <= n_space <= d:
        raise ValueError(f"n_space={n_space} must lie in [0, {d}] for an embedding of {d} columns")
    indptr, indices, pvals = P_parts
    if indptr.shape[0] != n + 1:
        raise ValueError(f"P has {indptr.shape[0] - 1} rows but the embedding has {n} points")
    if rep_weights is None:
        weights = _NO_WEIGHTS
    else:
        weights = np.ascontiguousarray(rep_weights, dtype=np.float64)
        if weights.shape != (n, n):
            raise ValueError(f"rep_weights has shape {weights.shape}, expected {(n, n)}")
    if parallel is None:
        parallel = n >= SERIAL_BELOW
    entry = _ENTRY[(kernel, bool(parallel))]
    shift = log_weight_bound(kernel, Y, n_space)
    att_cost, mass, att, rep = entry(Y, n_space, indptr, indices, pvals, weights, shift)
    if 0.0 <= mass < _MASS_UNDERFLOW and np.isfinite(shift):
        shift = float(_max_log_weight(kernel, Y, n_space))
        att_cost, mass, att, rep = entry(Y, n_space, indptr, indices, pvals, weights, shift)
    return PairFields(att_cost, mass, shift, att, rep)
