"""The exact O(n^2) neighbour-embedding kernel: one pair loop over every output kernel.

An embedding Y (n x d) has ``n_space`` space columns s and ``d - n_space`` time columns t;
for a pair (i, j), a = ||s_i - s_j||^2 and b = ||t_i - t_j||^2, and the output kernel w(a, b)
(SNE, t-SNE, SNEST) with alpha = -d log w / da and beta = -d log w / db is one of
:mod:`embedlab.kernels.output_kernels`.

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
``c`` (``shift``) is the log-sum-exp shift of
:func:`~embedlab.kernels.output_kernels.log_weight_bound`: every shifted weight is <= 1.

Costs are built from these four quantities without touching the loop (all sums are over
ordered pairs; P is symmetric, so each unordered pair appears twice):

* KL(P || Q), q_ij = w_ij / Z, Z = sum_{i != j} w_ij = M e^c (``NeighbourKL`` in
  :mod:`embedlab.methods.neighbour_kl`):
      KL = sum p log p + C_att + log M + c,     dKL/dy_i = 4 (A_i - R_i / M).
  The factor 4 = 2 (pair counted as (i, j) and (j, i)) x 2 (da/ds_i = 2 (s_i - s_j)).
  The SNEST paper (eq. 8-10) sums over i < j with p normalised over unordered pairs, i.e.
  p_paper = 2 p_ours: the KL value is the same and its gradient factor 2 is our 4.
  Early exaggeration scales the attraction: grad = 4 (e A_i - R_i / M).
* Elastic Embedding (:mod:`embedlab.methods.elastic`), E = sum v+_ij d_ij^2 + lambda sum
  v-_ij exp(-d_ij^2): :func:`pair_fields` with the SNE kernel, P = V+ (sparse) and
  ``rep_weights`` = V- (dense, or empty for uniform weights), shift 0; then E = C_att +
  lambda M and dE/dy_i = 4 (A_i - lambda R_i): a cost function of a few lines of numpy, not
  another loop.

A new output kernel is its branches in :mod:`embedlab.kernels.output_kernels`, plus its
compiled group of rows and its two entry points here (numba specialises the one loop per
kernel id, so the id is a compile-time constant and the branches cost nothing; closures from
a factory would not be cached on disk, hence the explicit functions).

Numerics: ``fastmath`` is restricted to contraction (FMA), reciprocals and
signed zeros (no ``nnan``/``ninf``), so NaN and inf propagate and are reported by the caller.
No reassociation: every sum over j is accumulated elementwise in per-column lanes and added
up in a fixed order, so the bits are the same for any thread count, schedule, and for a fresh
or a cached compile (with ``reassoc`` the two compiles vectorised a sum differently, and
runs on NIPS17 differed from the 4th digit on). In the dense loop
exp and 1/x are :func:`~embedlab.kernels.fastmath.fast_exp` and
:func:`~embedlab.kernels.fastmath.fast_reciprocal`, branch-free routines that LLVM vectorises
(libm's exp is not vectorised without SVML, and LLVM's cost model keeps a loop with a division
scalar on this CPU); in float64 both are accurate to about 1 ulp (exp: 3e-14 relative at
|x| ~ 700, where such weights no longer matter).

Precision (``precision`` of :func:`pair_fields`): the working precision of the dense
repulsion's pair arithmetic, float64 (the default and the reference) or float32.

* float32: Y is centred (in float64) and rounded to float32 (the transposed copy Yt), V and
  c are rounded; a, b, the shifted weights, alpha, beta and the pair forces are float32 (exp
  and 1/x in float32: twice the SIMD lanes of float64). Every sum stays float64: each weight
  and each force is widened before it is added to its lane or to the scatter slab, so M and
  R are summed in the same fixed order as in float64 and their rounding does not grow with
  n. The sparse attraction (C_att, A: O(nnz), not O(n^2)) reads the float64 Y in both
  precisions: its bits do not depend on ``precision``.
* errors: a few ulp per weight plus the rounding of the coordinates, which moves a pair
  difference by up to 2 u R (u = 2^-24, R the largest centred coordinate) and log w by up
  to :func:`float32_log_weight_error` (t-SNE: 2 u R; SNE: grows with the distances that
  carry weight; SNEST: also with the time extent). Where that estimate exceeds
  ``FLOAT32_TOLERANCE`` (1e-4), e.g. SNE after its points have flown apart, the evaluation
  runs in float64 and ``PairFields.precision`` says so. Below e^-87 a float32 weight is 0
  (float64: e^-708), so the exact-shift fallback starts at a mass of 1e-20.
* one loop: it is written over the dtype of Yt (a constant goes through
  :func:`~embedlab.kernels.fastmath.as_float_of`, a float literal being float64 in compiled
  code) and numba compiles each entry point once per precision. The float64 compile is the
  float64-only kernel's code: its results are the same bits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from embedlab.kernels.fastmath import FASTMATH, as_float_of
from embedlab.kernels.output_kernels import (
    SNE,
    SNEST,
    TSNE,
    kernel_has_time,
    log_weight,
    log_weight_bound,
    max_log_weight,
    neg_dlog_weight_da,
    neg_dlog_weight_db,
    shifted_weight,
)

BLOCK = 256  # columns j handled per inner block (fits L1 with its two buffers)
GROUPS = 16  # row groups, each with its own scatter slab (d x n): the unit of parallel work
SERIAL_BELOW = 256  # rows: below this, a serial entry point beats the thread start-up cost

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
    depend on how LLVM vectorises (which differs between a fresh and a cached compile).
    ``buf`` has the working precision of ``Yt`` (the pair arithmetic); ``lanes``, ``rep`` and
    ``scatter`` are float64, so each weight and force is widened before it is summed."""
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
        v = v_row[j0 : j0 + m]  # a slice: v[j] is a contiguous load (v_row[j0 + j] a gather)
        for j in range(m):
            a = wa[j]
            b = wb[j] if kernel_has_time(kernel) else as_float_of(a, 0.0)
            wj = shifted_weight(kernel, a, b, shift) * v[j]
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
def _group_rows(kernel, g, Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums):
    """The rows of group ``g``: their attraction and their pairs i < j, the forces on the
    j > i collected in the group's slab ``scatter[g]``. Rows are taken in pairs (r, n-1-r),
    which have n-1 pairs together, and the row pairs in contiguous groups. ``Y`` (float64,
    n x d) feeds the attraction; ``Yt`` (d x n, contiguous rows: SIMD over j) is Y transposed
    in the working precision and feeds the repulsion, with ``rep_weights`` and ``shift`` in
    the same precision; the sums are float64. ``sums``: :func:`_workspace`'s arrays."""
    att_cost_row, mass_row, att, rep, scatter, ones = sums
    n, d = Y.shape
    half = (n + 1) // 2  # row pairs; with n odd the middle row is alone
    groups = scatter.shape[0]
    slab = scatter[g]
    slab[:] = 0.0
    buf = np.empty((2, BLOCK), dtype=Yt.dtype)
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
                    kernel, i, Yt, n_space, v_row, shift, buf, lanes, rep, slab
                )


@njit(cache=True, fastmath=FASTMATH)
def _workspace(Y, Yt):
    """Per-row attraction costs and masses, A, R, one scatter slab (d x n) per group, and the
    uniform repulsive weights (n ones in Yt's precision, read where no weights are given)."""
    n, d = Y.shape
    groups = min(GROUPS, (n + 1) // 2)
    slabs = np.empty((groups, d, n))
    ones = np.ones(n, dtype=Yt.dtype)
    return np.zeros(n), np.zeros(n), np.zeros((n, d)), np.zeros((n, d)), slabs, ones


@njit(cache=True, fastmath=FASTMATH)
def _totals(sums):
    """(C_att, M, A, R) from the groups' sums: sequential sums in a fixed order (np.sum would
    become a thread-dependent reduction), so the result does not depend on the thread count
    or schedule."""
    att_cost_row, mass_row, att, rep, scatter, _ = sums
    groups, d, n = scatter.shape
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


# Per output kernel, one compiled group of rows (the kernel id a constant inside, so numba/LLVM
# drop the other kernels' branches and vectorise the dense loop) and two entry points that
# run the groups: in parallel (one thread per group) and in series. Both call the same
# compiled rows, compiled once per precision; the prange loop holds only that call, so
# numba's parallel passes see a loop of one statement and compile it in about a second (the
# whole pair loop inside the prange takes them about ten). The parallel loop's index is
# unsigned: it is passed as int64, the serial loop's type, so that the rows keep one compiled
# signature per precision.


@njit(cache=True, fastmath=FASTMATH)
def _rows_sne(g, Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums):
    _group_rows(SNE, g, Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)


@njit(cache=True, fastmath=FASTMATH)
def _rows_tsne(g, Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums):
    _group_rows(TSNE, g, Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)


@njit(cache=True, fastmath=FASTMATH)
def _rows_snest(g, Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums):
    _group_rows(SNEST, g, Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _fields_sne(Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift):
    sums = _workspace(Y, Yt)
    for g in prange(sums[4].shape[0]):
        _rows_sne(np.int64(g), Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)
    return _totals(sums)


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _fields_tsne(Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift):
    sums = _workspace(Y, Yt)
    for g in prange(sums[4].shape[0]):
        _rows_tsne(np.int64(g), Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)
    return _totals(sums)


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _fields_snest(Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift):
    sums = _workspace(Y, Yt)
    for g in prange(sums[4].shape[0]):
        _rows_snest(np.int64(g), Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)
    return _totals(sums)


@njit(cache=True, fastmath=FASTMATH)
def _fields_sne_serial(Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift):
    sums = _workspace(Y, Yt)
    for g in range(sums[4].shape[0]):
        _rows_sne(np.int64(g), Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)
    return _totals(sums)


@njit(cache=True, fastmath=FASTMATH)
def _fields_tsne_serial(Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift):
    sums = _workspace(Y, Yt)
    for g in range(sums[4].shape[0]):
        _rows_tsne(np.int64(g), Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)
    return _totals(sums)


@njit(cache=True, fastmath=FASTMATH)
def _fields_snest_serial(Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift):
    sums = _workspace(Y, Yt)
    for g in range(sums[4].shape[0]):
        _rows_snest(np.int64(g), Y, Yt, n_space, indptr, indices, pvals, rep_weights, shift, sums)
    return _totals(sums)


_ENTRY = {
    (SNE, True): _fields_sne,
    (TSNE, True): _fields_tsne,
    (SNEST, True): _fields_snest,
    (SNE, False): _fields_sne_serial,
    (TSNE, False): _fields_tsne_serial,
    (SNEST, False): _fields_snest_serial,
}
#: working precision of the dense pair arithmetic -> (dtype, the shifted mass below which the
#: shift c overshot: the largest shifted weight is then too close to underflow in that dtype)
PRECISIONS = {"float64": (np.float64, 1e-200), "float32": (np.float32, 1e-20)}
#: largest rounding error of log w (relative error of w) that a float32 evaluation may make,
#: by :func:`float32_log_weight_error`; above it the evaluation runs in float64
FLOAT32_TOLERANCE = 1e-4
_U32 = 2.0**-24  # unit roundoff of float32


def float32_log_weight_error(kernel: int, radius: float, radius_time: float, shift: float):
    """An upper estimate of the error of log w_ij in float32, over the pairs that carry weight.

    ``radius`` (``radius_time``): max |y_ik - centre_k| over the space (time) columns, the
    coordinates being centred in float64 before they are rounded. A pair difference is then
    off by <= 2 u R (u = 2^-24: two roundings, the subtraction's is smaller), so a (b) is off
    by <= 4 u R sqrt(a):

        SNE    log w = -a; weight is carried by a <= -c + 20    4 u R sqrt(20 - c)
        t-SNE  -log(1 + a): 4 u R sqrt(a) / (1 + a)            <= 2 u R
        SNEST  t-SNE's, + b's: b <= c, and b itself rounded     + 4 u R_t sqrt(c) + u c

    E.g. t-SNE stays in float32 up to R ~ 800, SNE up to R ~ 90 (c = 0); an SNE run whose
    points have flown apart (R ~ 1e5, c ~ -1e6, as SCHOOL's do for a while at rate 10) is
    evaluated in float64. NaN for non-finite input.
    """
    if kernel == SNE:
        return 4.0 * _U32 * radius * np.sqrt(20.0 + max(-shift, 0.0))
    error = 2.0 * _U32 * radius
    if kernel == SNEST:
        error += 4.0 * _U32 * radius_time * np.sqrt(max(shift, 0.0)) + _U32 * abs(shift)
    return error


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
    precision: str = "float64"  # of the dense pair arithmetic, as it ran


def pair_fields(
    kernel: int,
    Y: np.ndarray,
    n_space: int,
    P_parts: tuple[np.ndarray, np.ndarray, np.ndarray],
    rep_weights: np.ndarray | None = None,
    parallel: bool | None = None,
    precision: str = "float64",
) -> PairFields:
    """C_att, M, A, R of the module docstring for the embedding ``Y`` (n x d).

    ``P_parts`` from :func:`csr_parts`; ``rep_weights``: dense symmetric n x n V (None: all
    ones; only its upper triangle is read);
    ``parallel``: None chooses by size (serial below ``SERIAL_BELOW`` rows);
    ``precision``: "float64" (the reference) or "float32", the working precision of the
    dense repulsion's pair arithmetic (the sums stay float64, see the module docstring). In
    float32, Y is centred (in float64) and rounded, V and c are rounded; an evaluation whose
    float32 rounding of log w could exceed ``FLOAT32_TOLERANCE``
    (:func:`float32_log_weight_error`) runs in float64, and says so in ``precision``.
    The shift c is :func:`log_weight_bound`; when that bound
    overshoots so far that M underflows (possible only with several time dimensions, or
    SNE with all points > 26 apart, > 9 in float32), c is recomputed as the exact max of
    log w (one more O(n^2) pass) and the fields are recomputed. A non-finite M is returned
    as is: the caller reports the divergence. The returned shift is c as the loop used it
    (rounded to the working precision), so that log Z = log M + c holds to the last bit.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, d = Y.shape
    if not 0 <= n_space <= d:
        raise ValueError(f"n_space={n_space} must lie in [0, {d}] for an embedding of {d} columns")
    indptr, indices, pvals = P_parts
    if indptr.shape[0] != n + 1:
        raise ValueError(f"P has {indptr.shape[0] - 1} rows but the embedding has {n} points")
    if rep_weights is not None and np.shape(rep_weights) != (n, n):
        raise ValueError(f"rep_weights has shape {np.shape(rep_weights)}, expected {(n, n)}")
    if parallel is None:
        parallel = n >= SERIAL_BELOW
    entry = _ENTRY[(kernel, bool(parallel))]
    centred, radii = Y, None  # float32: Y centred; its largest space and time coordinates
    if precision == "float32" and n > 0:
        with np.errstate(invalid="ignore"):  # inf / NaN coordinates: float64 reports them
            low, high = Y.min(axis=0), Y.max(axis=0)
            centred = Y - 0.5 * (low + high)
            radius = 0.5 * (high - low)
        radii = (radius[:n_space].max(initial=0.0), radius[n_space:].max(initial=0.0))

    def run(shift: float) -> tuple[PairFields, float]:
        error = np.nan if radii is None else float32_log_weight_error(kernel, *radii, shift)
        name = "float32" if error <= FLOAT32_TOLERANCE else "float64"  # NaN: float64
        dtype, mass_underflow = PRECISIONS[name]
        Yt = np.ascontiguousarray((centred if name == "float32" else Y).T, dtype=dtype)
        weights = np.zeros((0, 0), dtype) if rep_weights is None else rep_weights
        weights = np.ascontiguousarray(weights, dtype=dtype)  # no copy if stored in dtype
        with np.errstate(over="ignore"):  # an inf shift is reported by the caller
            shift = dtype(shift)
        att_cost, mass, att, rep = entry(Y, Yt, n_space, indptr, indices, pvals, weights, shift)
        return PairFields(att_cost, mass, float(shift), att, rep, name), mass_underflow

    fields, mass_underflow = run(log_weight_bound(kernel, Y, n_space))
    if 0.0 <= fields.mass < mass_underflow and np.isfinite(fields.shift):
        fields, _ = run(float(max_log_weight(kernel, Y, n_space)))
    return fields
