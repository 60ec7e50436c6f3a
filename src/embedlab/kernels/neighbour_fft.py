"""Approximate neighbour-embedding fields: exact attraction, repulsion by grid interpolation + FFT.

The same four sums as :func:`embedlab.kernels.neighbour.pair_fields` (C_att, A, M, R, with the
same shift c and the same :class:`~embedlab.kernels.neighbour.PairFields`), for uniform
repulsive weights (v_ij = 1), in one call of :func:`fft_pair_fields`:

* the attraction C_att, A is exact, one pass over the non-zeros of P (O(nnz));
* the repulsion comes from the potential of the shifted kernel K_0(delta) = w(a, b) e^{-c}
  and its gradient on an FFT grid (:func:`embedlab.kernels.fft_repulsion.potentials`):

      phi_0(y) = sum_j K_0(y - y_j),     M = sum_i phi_0(y_i) - n e^{-c},
      R_i = -(1/2) grad phi_0(y_i).

  The force needs no kernel of its own: the pair direction of
  :mod:`embedlab.kernels.neighbour` is D_ij = (alpha delta_s, beta delta_t) with
  alpha = -d log w / da, beta = -d log w / db and da / d delta_s = 2 delta_s, so
  w D_ij = -(1/2) grad_delta w, and R_i = sum_j w_ij e^{-c} D_ij = -(1/2) grad phi_0(y_i) (the
  j = i term, w(0, 0) e^{-c} = e^{-c}, is flat at delta = 0 and is subtracted from M).

When the padded grid would exceed ``max_grid_points`` (a map blown up far beyond the
kernel's scale), or the approximate mass is not above 1e-200 (a safeguard: with one time
column the pair realising b_max keeps M >= 1 / (1 + a) of that pair), the fields of that call
are computed exactly (:func:`~embedlab.kernels.neighbour.pair_fields`) and :data:`FALLBACKS`
counts it. Non-finite coordinates give a non-finite mass, as the exact kernel does, which the
caller reports as divergence.

The approximation is absolute (relative to the largest sampled value, <= 1), and the j = i
terms (n e^{-c}) are subtracted from the interpolated sums: M keeps its accuracy while the
pair mass per point, M / n, is not far below 1 (SNE at radius 60 with n = 2000, M / n = 0.9:
rep error 1.5e-5).

The objectives (t-SNE / SNE / SNEST's ``NeighbourKL``, EE's ``ElasticCost``) call these fields
through :class:`RenumberedP`: the points renumbered once by the reverse Cuthill-McKee order of
P's graph, so that the attraction's reads of y_j and the grid's spread and gather stay in cache.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from scipy.sparse.csgraph import reverse_cuthill_mckee

from embedlab.kernels import interpolation
from embedlab.kernels import neighbour as exact
from embedlab.kernels.fastmath import FASTMATH, fast_log1p64
from embedlab.kernels.fft_repulsion import FFTSettings, grid_cells, potentials
from embedlab.kernels.neighbour import PairFields
from embedlab.kernels.output_kernels import (
    SNE,
    SNEST,
    TSNE,
    kernel_has_time,
    log_weight_bound,
    neg_dlog_weight_db,
)

log = logging.getLogger(__name__)

REPULSION = ("exact", "fft")
FALLBACKS = {"grid": 0, "mass": 0}  # calls computed exactly instead (too large a grid, tiny mass)
MASS_FLOOR = 1e-200  # an approximate shifted mass below this: exact fields (and shift)


def check_repulsion(repulsion: str) -> None:
    """Raise ValueError unless ``repulsion`` is one of REPULSION (the cost objects' choice)."""
    if repulsion not in REPULSION:
        raise ValueError(f"unknown repulsion {repulsion!r}; expected one of {REPULSION}")


def check_supported(kernel: int, n_space: int, n_time: int, rep_weights=None) -> None:
    """Raise ValueError for what the FFT repulsion cannot do: more than 3 columns, more than
    one time column (the shift b_max, a sum over time columns of their squared extents, is
    then not realised by any pair and may exceed every log w by hundreds: the approximate Z,
    accurate relative to the largest sampled value, would lose all its digits), dense
    repulsive weights."""
    if kernel not in (SNE, TSNE, SNEST):
        raise ValueError(f"unknown kernel id {kernel!r}")
    if not 1 <= n_space + n_time <= interpolation.MAX_DIMS:
        raise ValueError(
            f"repulsion='fft' needs 1 to {interpolation.MAX_DIMS} output dimensions (space + "
            f"time), got {n_space + n_time}; use repulsion='exact'"
        )
    if kernel == SNEST and n_time == 1 and n_space == 0:
        raise ValueError("repulsion='fft' for SNEST needs at least one space dimension; use "
                         "repulsion='exact'")
    if n_time > 1:
        raise ValueError(
            f"repulsion='fft' supports at most one time dimension, got {n_time}; use "
            "repulsion='exact'"
        )
    if rep_weights is not None:
        raise ValueError(
            "repulsion='fft' needs uniform repulsive weights (a translation-invariant kernel); "
            "got a dense rep_weights matrix: use repulsion='exact'"
        )


@njit(inline="always", fastmath=FASTMATH)
def _log_weight_simd(kernel, a, b):
    """:func:`embedlab.kernels.output_kernels.log_weight` with :func:`fast_log1p64` (within
    4 ulp, and a loop over it vectorises). Only this loop uses it: the exact kernel keeps
    libm's log1p, whose bits Table 1's runs depend on."""
    if kernel == SNE:
        return -a
    if kernel == TSNE:
        return -fast_log1p64(a)
    return b - fast_log1p64(a)


@njit(inline="always")
def _column_kind(k, d, n_space, has_time):
    """(s_k, t_k): (1, 0) for a space column k, (0, 1) for a time column, (0, 0) past d."""
    if k < n_space:
        return 1.0, 0.0
    if k < d and has_time:
        return 0.0, 1.0
    return 0.0, 0.0


@njit(inline="always", fastmath=FASTMATH)
def _neg_dlog_weight_da(kernel, a):
    """alpha = -d log w / da (:func:`embedlab.kernels.output_kernels.neg_dlog_weight_da`) by
    a true division: that function's Newton reciprocal lets the exact kernel's pair loop
    vectorise, but in this loop, whose reads of y_j are gathers that keep it scalar, the
    division is cheaper (with the branch-free columns and the dist stores only for the cost, the
    attraction 1.4-1.5x faster at 70,000 MNIST digits, benchmarks/README.md). Correctly
    rounded: within 1 ulp of that function."""
    if kernel == SNE:
        return 1.0
    return 1.0 / (1.0 + a)


@njit(inline="always", fastmath=FASTMATH)
def _attraction_row(kernel, i, Y, n_space, indptr, indices, pvals, att, dist, with_cost):
    """The exact kernel's attraction row (:func:`embedlab.kernels.neighbour._attraction_row`:
    A_i written to ``att[i]``; alpha by a true division, :func:`_neg_dlog_weight_da`, so the
    same to rounding) with its cost sum_j p_ij (-log w_ij) taken in a
    second loop over the squared distances kept in ``dist`` (2 x at least the row's
    non-zeros), with :func:`_log_weight_simd`: that loop has no gather, so it vectorises
    (libm's scalar log1p would dominate the row's time at n = 70,000), and it sums in a fixed
    order. The cost agrees with the exact kernel's to a few ulp. The row's point and forces
    (d <= 3 columns) are held in scalars: accumulated in ``att[i]``, which LLVM must assume
    may alias ``Y``, they would be stored and loaded again at every non-zero, a chain through
    memory that sets the loop's pace. (The exact kernel keeps its own loop, whose bits Table
    1's runs depend on.) Without ``with_cost`` the second loop is skipped and the row's cost
    is 0 (the forces are the same bits)."""
    d = Y.shape[1]
    start = indptr[i]
    m = indptr[i + 1] - start
    has_time = kernel_has_time(kernel)
    y0 = Y[i, 0]
    y1 = Y[i, 1] if d > 1 else 0.0
    y2 = Y[i, 2] if d > 2 else 0.0
    # column k is space (s_k = 1), time (t_k = 1) or absent (both 0): 0/1 factors instead of
    # branches in the loop (exact: x * 1 and + 0 round nothing)
    s0, t0 = _column_kind(0, d, n_space, has_time)
    s1, t1 = _column_kind(1, d, n_space, has_time)
    s2, t2 = _column_kind(2, d, n_space, has_time)
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    for q in range(m):
        j = indices[start + q]
        p = pvals[start + q]
        e0 = y0 - Y[j, 0]
        e1 = y1 - Y[j, 1] if d > 1 else 0.0
        e2 = y2 - Y[j, 2] if d > 2 else 0.0
        sq0 = e0 * e0
        sq1 = e1 * e1
        sq2 = e2 * e2
        a = s0 * sq0 + s1 * sq1 + s2 * sq2  # the squared space and time distances
        b = t0 * sq0 + t1 * sq1 + t2 * sq2
        if with_cost:
            dist[0, q] = a
            dist[1, q] = b
        pa = p * _neg_dlog_weight_da(kernel, a)
        pb = p * neg_dlog_weight_db(kernel, a, b)
        f0 += (s0 * pa + t0 * pb) * e0
        f1 += (s1 * pa + t1 * pb) * e1
        f2 += (s2 * pa + t2 * pb) * e2
    att[i, 0] = f0
    if d > 1:
        att[i, 1] = f1
    if d > 2:
        att[i, 2] = f2
    if not with_cost:
        return 0.0
    terms = dist[0, :m]
    p_row = pvals[start : start + m]
    for q in range(m):
        terms[q] = -p_row[q] * _log_weight_simd(kernel, terms[q], dist[1, q])
    return exact._ordered_sum(terms, m)


@njit(inline="always", fastmath=FASTMATH)
def _attraction(kernel, Y, n_space, indptr, indices, pvals, with_cost):
    """C_att and A over the non-zeros of P (exact); rows in GROUPS contiguous groups, one
    thread each, each row written by one thread, the cost summed in row order
    (deterministic); C_att is 0 without ``with_cost``."""
    n, d = Y.shape
    att = np.zeros((n, d))
    cost_row = np.zeros(n)
    groups = min(exact.GROUPS, n)
    most = 0  # non-zeros of the fullest row: the length of each thread's ``dist``
    for i in range(n):
        most = max(most, indptr[i + 1] - indptr[i])
    for g in prange(groups):
        dist = np.empty((2, most))
        for i in range(g * n // groups, (g + 1) * n // groups):
            cost_row[i] = _attraction_row(
                kernel, i, Y, n_space, indptr, indices, pvals, att, dist, with_cost
            )
    cost = 0.0
    for i in range(n):
        cost += cost_row[i]
    return cost, att


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _attraction_parallel(kernel, Y, n_space, indptr, indices, pvals, with_cost=True):
    return _attraction(kernel, Y, n_space, indptr, indices, pvals, with_cost)


@njit(cache=True, fastmath=FASTMATH)
def _attraction_serial(kernel, Y, n_space, indptr, indices, pvals, with_cost=True):
    return _attraction(kernel, Y, n_space, indptr, indices, pvals, with_cost)


def fft_pair_fields(
    kernel: int,
    Y: np.ndarray,
    n_space: int,
    P_parts: tuple[np.ndarray, np.ndarray, np.ndarray],
    settings: FFTSettings | None = None,
    with_cost: bool = True,
) -> PairFields:
    """C_att, M, A, R of :func:`embedlab.kernels.neighbour.pair_fields` (uniform repulsive
    weights) with the repulsion by interpolation + FFT (module docstring); without
    ``with_cost``, C_att is NaN and its log per non-zero of P is skipped (M, A, R unchanged:
    an optimiser's epochs that need only the gradient)."""
    settings = FFTSettings() if settings is None else settings
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, d = Y.shape
    if not 0 <= n_space <= d:
        raise ValueError(f"n_space={n_space} must lie in [0, {d}] for an embedding of {d} columns")
    check_supported(kernel, n_space, d - n_space if kernel == SNEST else 0)
    indptr, indices, pvals = P_parts
    if indptr.shape[0] != n + 1:
        raise ValueError(f"P has {indptr.shape[0] - 1} rows but the embedding has {n} points")
    if not np.isfinite(Y).all():  # as the exact kernel: a non-finite mass, reported upstream
        nan = np.full((n, d), np.nan)
        return PairFields(math.nan, math.nan, math.nan, nan, nan.copy())
    shift = log_weight_bound(kernel, Y, n_space)
    # SNEST's space columns copied once (grid_cells, cell_widths, make_grid and every block
    # of kernel_sums read them)
    space = np.ascontiguousarray(Y[:, :n_space]) if kernel == SNEST else Y
    cells = grid_cells(space, settings)
    if interpolation.fft_points(cells, settings.n_interpolation_points) > settings.max_grid_points:
        FALLBACKS["grid"] += 1
        log.info("fft repulsion: grid of %s cells too large, exact fields", cells.tolist())
        return exact.pair_fields(kernel, Y, n_space, P_parts)
    phi = potentials(kernel, Y, n_space, space, cells, shift, settings)
    mass = float(phi[:, 0].sum() - n * math.exp(-shift))
    if not mass > MASS_FLOOR:
        FALLBACKS["mass"] += 1
        log.info("fft repulsion: approximate mass %r too small, exact fields", mass)
        return exact.pair_fields(kernel, Y, n_space, P_parts)
    attraction = _attraction_parallel if n >= interpolation.PARALLEL_FROM else _attraction_serial
    att_cost, att = attraction(kernel, Y, n_space, indptr, indices, pvals, with_cost)
    if not with_cost:
        att_cost = math.nan
    rep = -0.5 * phi[:, 1:]  # R_i = -(1/2) grad phi_0(y_i)
    return PairFields(float(att_cost), mass, shift, att, np.ascontiguousarray(rep))


@dataclass(frozen=True)
class RenumberedP:
    """P's non-zeros with the points renumbered for memory locality: the reverse Cuthill-McKee
    order of P's graph puts the neighbours of a point near it in the numbering, so the
    attraction's reads of y_j and the grid's spread and gather (neighbours in P are near in
    the map) mostly hit the cache. One objective call of t-SNE R^2 on 70,000 MNIST digits
    1.15x faster (benchmarks/README.md); the fields are those of :func:`fft_pair_fields` in
    the caller's numbering, summed in another order (the same to rounding).
    ``order[k]`` is the point at position k, ``position[i]`` the position of point i;
    ``parts`` as :func:`embedlab.kernels.neighbour.csr_parts`."""

    parts: tuple[np.ndarray, np.ndarray, np.ndarray]
    order: np.ndarray
    position: np.ndarray

    @classmethod
    def of(cls, P_parts: tuple[np.ndarray, np.ndarray, np.ndarray]) -> RenumberedP:
        indptr, indices, pvals = P_parts
        n = indptr.shape[0] - 1
        P = sp.csr_matrix((pvals, indices, indptr), shape=(n, n))
        order = np.asarray(reverse_cuthill_mckee(P, symmetric_mode=False), dtype=np.int64)
        position = np.empty_like(order)
        position[order] = np.arange(n)
        return cls(exact.csr_parts(P[order][:, order]), order, position)

    def fields(self, kernel: int, Y: np.ndarray, n_space: int,
               settings: FFTSettings | None = None, with_cost: bool = True) -> PairFields:
        """:func:`fft_pair_fields` at ``Y`` (the caller's numbering in and out; np.take, ~10x
        faster than fancy indexing for these n x d gathers)."""
        moved = np.take(np.asarray(Y, dtype=np.float64), self.order, axis=0)
        f = fft_pair_fields(kernel, moved, n_space, self.parts, settings, with_cost)
        return f._replace(att=np.take(f.att, self.position, axis=0),
                          rep=np.take(f.rep, self.position, axis=0))
