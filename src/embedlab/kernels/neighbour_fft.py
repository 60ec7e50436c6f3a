"""Approximate neighbour-embedding fields: exact attraction, repulsion by grid interpolation + FFT.

The same four sums as :func:`embedlab.kernels.neighbour.pair_fields` (C_att, A, M, R, with the
same shift c and the same :class:`~embedlab.kernels.neighbour.PairFields`), for uniform
repulsive weights (v_ij = 1):

* the attraction C_att, A is exact, one pass over the non-zeros of P (O(nnz));
* the repulsion is one sum of a translation-invariant kernel of delta = y_i - y_j,
  K_0(delta) = w(a, b) e^{-c} (a = ||delta_s||^2, b = ||delta_t||^2), and its gradient,
  computed by :func:`embedlab.kernels.interpolation.kernel_sums` (FIt-SNE, Linderman et al.
  2019) in O(n p^d + L log L) on a grid over all d = ds + dt columns (d <= 3):

      phi_0(y) = sum_j K_0(y - y_j),     M = sum_i phi_0(y_i) - n e^{-c},
      R_i = -(1/2) grad phi_0(y_i).

  The force needs no kernel of its own: the pair direction of
  :mod:`embedlab.kernels.neighbour` is D_ij = (alpha delta_s, beta delta_t) with
  alpha = -d log w / da, beta = -d log w / db and da / d delta_s = 2 delta_s, so
  w D_ij = -(1/2) grad_delta w, and R_i = sum_j w_ij e^{-c} D_ij = -(1/2) grad phi_0(y_i) (the
  j = i term, w(0, 0) e^{-c} = e^{-c}, is flat at delta = 0 and is subtracted from M). The
  gradient is that of the interpolant (the derivatives of the Lagrange weights, see
  :mod:`embedlab.kernels.interpolation`), one power of h less accurate than the value, hence
  p = 9 by default; in exchange one kernel and one charge grid are transformed, 3 FFTs per
  call whatever d, 2 when the kernel's spectrum is kept from the call before (below;
  sampling the d force kernels w alpha delta_k instead took 2 d + 3, and for the same error
  at p = 8 ran 1.5-1.7x slower in 2-D, benchmarks/README.md).

For SNEST the kernel sampled on the grid is exp(b - c) / (1 + a) with today's shift
c = b_max (:func:`~embedlab.kernels.neighbour.log_weight_bound`): every sampled value is <= 1
(node offsets never exceed the points' extent; along a time column where all points coincide
the unit-width box's offsets stay below 1, so below e), and nothing overflows however large
the time extent is.

Grid (:class:`FFTSettings`): along dimension k with extent E_k the kernel changes on the scale
1 / rate_k, rate_k = 1 in space (1/(1 + a) and exp(-a) have O(1) derivatives) and max(1, 2 E_t)
in time (d log exp(b) / dt = 2 dt, up to 2 E_t); it gets G_k = max(min_grid_size,
ceil(intervals_per_unit E_k rate_k)) boxes of p = ``n_interpolation_points`` nodes. Along a
column of rate 1 (space) with more than 20 boxes, the boxes have the fixed width h =
1 / intervals_per_unit, from the lowest point, and G_k is rounded up to a ladder
(ceil(20 x 1.05^m), :func:`grid_boxes`): the node step and counts then stay the same from one
epoch to the next while the map's extent changes by less than ~5 %, and the FFT of the sampled
kernel is kept between calls (the last one, :func:`_kernel_spectrum`; t-SNE and SNE have the
shift c = 0; SNEST's step and shift follow its time extent, so it recomputes it). Otherwise
(SNEST's time, a compact map's few boxes) the boxes fit the extent, h = E_k / G_k. Smaller
boxes with fewer nodes do not pay: at equal error the node density p / h must be about the same
(~9 per unit for a gradient error < 1e-3, p = 5-7 with 1.5-2 boxes per unit included), and the
grid's cost follows the density (benchmarks/README.md). When the padded grid would exceed
``max_grid_points`` (a map blown up far beyond the kernel's scale), or the approximate mass is
not above 1e-200 (a safeguard: with one time column the pair realising b_max keeps
M >= 1 / (1 + a) of that pair), the fields of that call are computed exactly
(:func:`~embedlab.kernels.neighbour.pair_fields`) and :data:`FALLBACKS` counts it. Non-finite
coordinates give a non-finite mass, as the exact kernel does, which the caller reports as
divergence.

The approximation is absolute (relative to the largest sampled value, <= 1), and the j = i
terms (n e^{-c}) are subtracted from the interpolated sums: M keeps its accuracy while the
pair mass per point, M / n, is not far below 1 (SNE at radius 60 with n = 2000, M / n = 0.9:
rep error 1.5e-5). A new output kernel needs its rate here (:func:`grid_boxes`) besides its
branches in :mod:`embedlab.kernels.neighbour`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from embedlab.kernels import interpolation
from embedlab.kernels import neighbour as exact
from embedlab.kernels.neighbour import SNE, SNEST, TSNE, PairFields

log = logging.getLogger(__name__)

REPULSION = ("exact", "fft")
SAMPLE_PARALLEL_FROM = 2**20  # sampled kernel values: below this, one thread
FALLBACKS = {"grid": 0, "mass": 0}  # calls computed exactly instead (too large a grid, tiny mass)
MASS_FLOOR = 1e-200  # an approximate shifted mass below this: exact fields (and shift)
LADDER_FROM = 20  # box counts above this are rounded up to ceil(20 x 1.05^m) (grid_boxes)
LADDER_RATIO = 1.05
_SPECTRUM: dict = {}  # the last kernel spectrum, by (kernel, n_space, shift, steps, nodes)


@dataclass(frozen=True)
class FFTSettings:
    """Grid of the approximate repulsion (defaults: gradient error < 1e-3, benchmarks/README)."""

    n_interpolation_points: int = 9  # p, nodes per box and dimension
    intervals_per_unit: float = 1.0  # boxes per unit of extent x kernel rate
    min_grid_size: int = 1  # boxes per dimension at least
    max_grid_points: int = 2**25  # padded grid points (~40 bytes each at the peak) beyond
    # which a call falls back to exact

    def __post_init__(self) -> None:
        checks = {
            "n_interpolation_points": 1 <= self.n_interpolation_points <= 16,
            "intervals_per_unit": self.intervals_per_unit > 0,
            "min_grid_size": self.min_grid_size >= 1,
            "max_grid_points": self.max_grid_points >= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"FFTSettings.{name} = {getattr(self, name)!r} is out of range")


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


def _rates(kernel: int, extent: np.ndarray, n_space: int) -> np.ndarray:
    """rate_k of the module docstring: 1 in space, max(1, 2 E_t) in SNEST's time."""
    rate = np.ones(extent.shape[0])
    if kernel == SNEST:  # one time column at most (check_supported)
        rate[n_space:] = np.maximum(1.0, 2.0 * extent[n_space:])
    return rate


def _ladder(boxes: np.ndarray) -> np.ndarray:
    """Each box count rounded up to the ladder 1, 2, .., LADDER_FROM, then
    ceil(LADDER_FROM LADDER_RATIO^m): a map that grows by a few percent keeps its grid."""
    out = boxes.copy()
    big = boxes > LADDER_FROM
    # the least m with LADDER_FROM LADDER_RATIO^m > G - 1, i.e. ceil(..) >= G
    steps = np.floor(np.log((boxes[big] - 1) / LADDER_FROM) / math.log(LADDER_RATIO)) + 1
    out[big] = np.maximum(boxes[big], np.ceil(LADDER_FROM * LADDER_RATIO**steps))
    return out


def grid_boxes(kernel: int, Y: np.ndarray, n_space: int, settings: FFTSettings) -> np.ndarray:
    """G_k of the module docstring for the (finite) embedding ``Y``; along a column of rate 1
    rounded up to the ladder of :func:`_ladder`."""
    extent = Y.max(axis=0) - Y.min(axis=0)
    rate = _rates(kernel, extent, n_space)
    wanted = np.ceil(settings.intervals_per_unit * extent * rate)
    wanted = np.minimum(wanted, 2.0**40)  # keeps the int conversion of a blown-up map finite
    boxes = np.maximum(settings.min_grid_size, wanted).astype(np.int64)
    return np.where(rate == 1.0, _ladder(boxes), boxes)


def box_widths(kernel: int, Y: np.ndarray, n_space: int, settings: FFTSettings,
               boxes: np.ndarray) -> np.ndarray:
    """h_k: 1 / intervals_per_unit along a column of rate 1 with more than LADDER_FROM boxes
    (the same node step every call, so the kernel's spectrum can be kept); otherwise E_k / G_k,
    the boxes fitting the extent (a compact map's small grid: boxes up to ~2x narrower for a
    few units of extent, cheap to recompute; SNEST's time, whose rate, and so its step, follows
    the extent: its offsets then never exceed E_t, so no sampled value exceeds
    exp(b_max - c) = 1), 1 where all points coincide."""
    extent = Y.max(axis=0) - Y.min(axis=0)
    rate = _rates(kernel, extent, n_space)
    fitted = np.where(extent > 0, extent / boxes, 1.0)
    fixed = (rate == 1.0) & (boxes > LADDER_FROM)
    return np.where(fixed, 1.0 / settings.intervals_per_unit, fitted)


@njit(inline="always", fastmath=exact.FASTMATH)
def _sample(kernel, off0, off1, off2, n_space, shift, out):
    """out[i0, i1, i2] = w e^{-c} at the offset (off0[i0], off1[i1], off2[i2]) (unused
    dimensions: a single offset 0), 0 where an offset is NaN; the kernel's own shifted weight
    (:func:`embedlab.kernels.neighbour.shifted_weight`)."""
    for i0 in prange(off0.shape[0]):
        for i1 in range(off1.shape[0]):
            for i2 in range(off2.shape[0]):
                delta = (off0[i0], off1[i1], off2[i2])
                a = 0.0
                b = 0.0
                for k in range(3):
                    if k < n_space:
                        a += delta[k] ** 2
                    else:
                        b += delta[k] ** 2
                if math.isnan(a + b):
                    out[i0, i1, i2] = 0.0
                else:
                    out[i0, i1, i2] = exact.shifted_weight(kernel, a, b, shift)


@njit(parallel=True, cache=True, fastmath=exact.FASTMATH)
def _sample_parallel(kernel, off0, off1, off2, n_space, shift, out):
    _sample(kernel, off0, off1, off2, n_space, shift, out)


@njit(cache=True, fastmath=exact.FASTMATH)
def _sample_serial(kernel, off0, off1, off2, n_space, shift, out):
    _sample(kernel, off0, off1, off2, n_space, shift, out)


def sampled_kernel(kernel: int, n_space: int, shift: float):
    """The function of the grid offsets giving K_0 = w e^{-c} (module docstring) as a
    1 x L_1 x .. x L_d array, 0 where an offset is unused (NaN)."""

    def sample(offsets: list[np.ndarray]) -> np.ndarray:
        d = len(offsets)
        lengths = [o.shape[0] for o in offsets]
        padded = [*offsets, *[np.zeros(1)] * (3 - d)]  # a padded dimension has offset 0
        out = np.empty([*lengths, *[1] * (3 - d)])
        entry = _sample_parallel if out.size >= SAMPLE_PARALLEL_FROM else _sample_serial
        entry(kernel, *padded, n_space, shift, out)
        return out.reshape(1, *lengths)

    return sample


@njit(inline="always", fastmath=exact.FASTMATH)
def _attraction(kernel, Y, n_space, indptr, indices, pvals):
    """C_att and A over the non-zeros of P (exact); each row written by one thread, the cost
    summed in row order (deterministic)."""
    n, d = Y.shape
    att = np.zeros((n, d))
    cost_row = np.zeros(n)
    for i in prange(n):
        cost_row[i] = exact._attraction_row(kernel, i, Y, n_space, indptr, indices, pvals, att)
    cost = 0.0
    for i in range(n):
        cost += cost_row[i]
    return cost, att


@njit(parallel=True, cache=True, fastmath=exact.FASTMATH)
def _attraction_parallel(kernel, Y, n_space, indptr, indices, pvals):
    return _attraction(kernel, Y, n_space, indptr, indices, pvals)


@njit(cache=True, fastmath=exact.FASTMATH)
def _attraction_serial(kernel, Y, n_space, indptr, indices, pvals):
    return _attraction(kernel, Y, n_space, indptr, indices, pvals)


def _kernel_spectrum(kernel: int, n_space: int, shift: float, grid: interpolation.Grid):
    """The FFT of K_0 sampled on ``grid``, kept (one, the last) for the next call with the same
    kernel, shift, node steps and node counts: an optimiser's epochs on a map that changes
    little (t-SNE and SNE: shift 0, a fixed step, box counts on a ladder) reuse it, which
    saves sampling the kernel and one of the three FFTs. The same bits either way."""
    key = (kernel, n_space, shift, tuple(grid.node_step.tolist()), grid.n_nodes)
    cached = _SPECTRUM.get(key)
    if cached is None:
        cached = interpolation.kernel_spectrum(grid, sampled_kernel(kernel, n_space, shift))
        _SPECTRUM.clear()
        _SPECTRUM[key] = cached
    return cached


def fft_pair_fields(
    kernel: int,
    Y: np.ndarray,
    n_space: int,
    P_parts: tuple[np.ndarray, np.ndarray, np.ndarray],
    settings: FFTSettings | None = None,
) -> PairFields:
    """C_att, M, A, R of :func:`embedlab.kernels.neighbour.pair_fields` (uniform repulsive
    weights) with the repulsion by interpolation + FFT (module docstring)."""
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
    shift = exact.log_weight_bound(kernel, Y, n_space)
    boxes = grid_boxes(kernel, Y, n_space, settings)
    p = settings.n_interpolation_points
    if interpolation.fft_points(boxes, p) > settings.max_grid_points:
        FALLBACKS["grid"] += 1
        log.info("fft repulsion: grid %s x %d nodes too large, exact fields", boxes.tolist(), p)
        return exact.pair_fields(kernel, Y, n_space, P_parts)
    grid = interpolation.make_grid(Y, boxes, p, box_widths(kernel, Y, n_space, settings, boxes))
    phi = interpolation.kernel_sums(
        Y, grid, None, spectrum=_kernel_spectrum(kernel, n_space, shift, grid)
    )[:, 0, :]
    mass = float(phi[:, 0].sum() - n * math.exp(-shift))
    if not mass > MASS_FLOOR:
        FALLBACKS["mass"] += 1
        log.info("fft repulsion: approximate mass %r too small, exact fields", mass)
        return exact.pair_fields(kernel, Y, n_space, P_parts)
    attraction = _attraction_parallel if n >= interpolation.PARALLEL_FROM else _attraction_serial
    att_cost, att = attraction(kernel, Y, n_space, indptr, indices, pvals)
    rep = -0.5 * phi[:, 1:]  # R_i = -(1/2) grad phi_0(y_i)
    return PairFields(float(att_cost), mass, shift, att, np.ascontiguousarray(rep))
