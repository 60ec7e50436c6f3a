"""Sums of a translation-invariant kernel over all points, by grid interpolation and FFT.

For n points y_1..y_n in R^d (d <= 3), unit charges and r kernels K_1..K_r (smooth,
translation-invariant: K(y_i, y_j) = K(y_i - y_j)), this module computes the potentials and
their gradients

    phi_r(y_i) = sum_j K_r(y_i - y_j)        (the term j = i included),   grad phi_r(y_i)

(or, for one kernel and r charge sets c_jr, phi_r(y_i) = sum_j K(y_i - y_j) c_jr)

in O(n p^d d r + r L log L) instead of O(n^2 r), after Linderman, Rachh, Hoskins, Steinerberger
and Kluger, "Fast interpolation-based t-SNE for improved visualization of single-cell RNA-seq
data", Nature Methods 16, 243-245 (2019) (FIt-SNE):

* Grid. Along dimension k the points lie in [lo_k, lo_k + E_k], cut into G_k cells of width
  Delta_k (G_k Delta_k >= E_k); the nodes are equispaced with that step, x_j = lo_k +
  (j - s) Delta_k, j = 0..N_k - 1, s = (p - 1) // 2, N_k = G_k + p - 1 (+ 1 for odd p): the
  cell lattice extended by the stencil's reach on both sides.
* Interpolation. A point at t = (y - lo) / Delta takes the p nodes of its stencil, centred on
  it: c = floor(t) (even p: t between the two middle nodes) or floor(t + 1/2) (odd p: the
  middle node nearest), u = t - c, local nodes u_m = m - s, m = 0..p-1 (node index c + m), and
  the Lagrange weights
      L_m(u) = prod_{l != m} (u - u_l) / (u_m - u_l),
  and in d dimensions the tensor products W_i(x) = prod_k L_{m_k}(u_ik) on the p^d nodes x
  of its stencil. Interpolating y -> K(x - y) and x -> K(x - y) on these nodes gives
      phi(y_i) ~= sum_x W_i(x) sum_x' K(x - x') sum_j W_j(x') = gather(K * spread(1)).
  The error of one interpolation is at most max |d^p K / dy^p| Delta^p / p! x max_u
  prod_m |u - u_m| per dimension: it falls as Delta^p, so a finer lattice or a wider stencil
  (larger p) reduces it. The stencil centred on the point keeps max_u prod_m |u - u_m| at its
  least: for p = 6 it is 3.5, against 162 at the edge of a box of 6 nodes (FIt-SNE's scheme,
  where a point takes its box's own nodes; 0.56 against 6.6 for p = 4). At equal error the
  grid needs ~2x fewer nodes per unit, and each point ~2x fewer nodes in 2-D
  (benchmarks/README.md). The gradient is that of the
  interpolant, grad phi(y_i) ~= sum_x grad W_i(x) f(x) with d L_m / dy = L'_m(u) / Delta:
  one power of Delta less accurate.
* Convolution. The node values are K at node differences (x - x')_k = Delta_k l_k with
  |l_k| < N_k: a d-dimensional Toeplitz product. Zero padding each dimension to a length
  L_k >= 2 N_k - 1 (scipy.fft.next_fast_len) embeds it in a circulant one, whose product is
  irfftn(rfftn(spread) rfftn(K~)) with K~ the kernel at the circular offsets l_k (index
  l_k mod L_k; the unused middle indices hold 0). ``scipy.fft`` runs it on all cores, one axis
  at a time so that each 1-D transform skips the rows known to be zero (forward) or not
  wanted (inverse): ~25 % less work in 2-D than the full rfftn / irfftn. rfftn(K~) depends
  only on the node steps and counts: :func:`kernel_spectrum` computes it for a caller to keep
  (:mod:`embedlab.kernels.fft_repulsion` keeps the last one).

Spreading is parallel over strips of nodes along the first dimension (a thread owns a strip's
nodes and adds every point whose stencil reaches them, so no two threads add to the same node)
and each node sums its points in point order: deterministic, the same bits as one serial
pass; the weights and the gathering are parallel over points from
``PARALLEL_FROM`` points, each writing only its own row, and scipy's FFT gives the
same bits on any number of workers (checked on 1 and 2): the result does not depend on the
thread count. Everything is float64, but a caller may run the FFTs (the kernel's spectrum, the
transforms of the spread grids and their inverse) in single precision (``fft_dtype``), about
twice as fast. Their rounding, ~1e-7 of the largest potential, then enters the gradient
through the interpolant's slopes, ~p / Delta: harmless on a grid of a fixed node step of the
kernel's scale, where it stays orders of magnitude below the interpolation error, ruinous on
a tiny map (an optimiser's first epochs), whose node step is tiny and whose field is tiny
against its potential (:mod:`embedlab.kernels.fft_repulsion` decides). The spread sums and the
gather are float64 always.

The kernels are given as a function of the offsets (one 1-D array per dimension, in
coordinate units), so the caller decides what is sampled (the neighbour
kernels: :mod:`embedlab.kernels.fft_repulsion`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.fft
from numba import njit, prange

MAX_DIMS = 3  # a d-D grid has (G p)^d nodes: beyond 3 dimensions it costs more than it saves
# points: below this the O(n p^d) passes run on one thread (a parallel region's start-up,
# tens of ms on a loaded machine, costs more than the pass itself)
PARALLEL_FROM = 16384
SPREAD_STRIPS = 16  # node strips of the parallel spread (a thread each; any count, same bits)


@dataclass(frozen=True)
class Grid:
    """G_k cells of width Delta_k from lo_k along each dimension; stencils of p nodes."""

    lower: np.ndarray  # lo_k, (d,)
    cell_width: np.ndarray  # Delta_k, the node step, (d,)
    n_cells: np.ndarray  # G_k, (d,) int64
    stencil: int  # p, nodes per point and dimension

    @property
    def n_nodes(self) -> tuple[int, ...]:
        """N_k = G_k + p - 1 (+ 1 for odd p) nodes per dimension."""
        return tuple(nodes_along(int(g), self.stencil) for g in self.n_cells)

    @property
    def node_step(self) -> np.ndarray:
        """Delta_k."""
        return self.cell_width

    @property
    def fft_shape(self) -> tuple[int, ...]:
        """L_k >= 2 N_k - 1, a fast length for scipy.fft."""
        return tuple(scipy.fft.next_fast_len(2 * n - 1, real=True) for n in self.n_nodes)


def nodes_along(n_cells: int, stencil: int) -> int:
    """N = G + p - 1 (+ 1 for odd p): every stencil of a point in the G cells."""
    return n_cells + stencil - 1 + stencil % 2


def fft_points(n_cells, stencil: int) -> int:
    """prod_k (2 N_k - 1): the size of one padded grid for these cell counts (its memory and
    FFT cost), before rounding each L_k up to a fast length."""
    # Python integers: a blown-up map's cell counts must not wrap around in int64
    return math.prod(2 * nodes_along(int(g), stencil) - 1 for g in n_cells)


@njit(cache=True)
def column_bounds(Y):
    """(lowest, highest) value of each column of ``Y`` (n x d, finite), in one pass over the
    rows: numpy's Y.min(axis=0) and Y.max(axis=0) on a C-ordered 70,000 x 2 array took ~17x
    as long (4.0 against 0.23 ms, one measurement), and a t-SNE epoch made eight such calls."""
    n, d = Y.shape
    if n == 0:
        raise ValueError("a grid over no points")
    lower = np.full(d, np.inf)
    upper = np.full(d, -np.inf)
    for i in range(n):
        for k in range(d):
            lower[k] = min(lower[k], Y[i, k])
            upper[k] = max(upper[k], Y[i, k])
    return lower, upper


def make_grid(Y: np.ndarray, n_cells, stencil: int, cell_width=None) -> Grid:
    """The grid from the lowest point of ``Y`` (n x d, finite) with ``n_cells[k]`` cells along
    k, of width ``cell_width[k]`` (G_k Delta_k must cover the points' extent E_k) or, by
    default, Delta_k = E_k / G_k. A dimension where all points coincide gets cells of width 1
    by default (any width is exact there)."""
    if stencil < 1:
        raise ValueError(f"a stencil needs at least 1 node, got {stencil}")
    lower, upper = column_bounds(np.ascontiguousarray(Y, dtype=np.float64))
    extent = upper - lower
    n_cells = np.asarray(n_cells, dtype=np.int64)
    if cell_width is None:
        width = np.where(extent > 0, extent / n_cells, 1.0)
    else:
        width = np.broadcast_to(np.asarray(cell_width, dtype=np.float64), extent.shape).copy()
        if not (width > 0).all() or (n_cells * width < extent * (1 - 1e-12)).any():
            raise ValueError(f"{n_cells.tolist()} cells of width {width.tolist()} do not "
                             f"cover the extent {extent.tolist()}")
    return Grid(lower, width, n_cells, int(stencil))


@njit(inline="always")
def _lagrange_weights(Y, lower, width, n_cells, p):
    """(first node of the stencil (n, d), weights L_m(u) (n, d, p), their derivatives
    d L_m(u) / dy = L'_m(u) / Delta (n, d, p)) of every point along every dimension."""
    n, d = Y.shape
    first = np.empty((n, d), dtype=np.int64)
    weights = np.empty((n, d, p))
    slopes = np.empty((n, d, p))
    reach = (p - 1) // 2  # s: local nodes m - s
    half = 0.5 * (p % 2)  # odd p: the middle node nearest the point
    denominators = np.ones(p)
    for m in range(p):
        for ell in range(p):
            if ell != m:
                denominators[m] *= m - ell
    for i in prange(n):
        for k in range(d):
            t = (Y[i, k] - lower[k]) / width[k]
            c = min(max(int(math.floor(t + half)), 0), n_cells[k] - 1 + p % 2)
            u = t - c
            first[i, k] = c
            for m in range(p):
                value = 1.0
                slope = 0.0  # d/du prod_{l != m} (u - u_l), by the product rule
                for ell in range(p):
                    if ell != m:
                        slope = slope * (u - (ell - reach)) + value
                        value *= u - (ell - reach)
                weights[i, k, m] = value / denominators[m]
                slopes[i, k, m] = slope / (denominators[m] * width[k])
    return first, weights, slopes


@njit(parallel=True, cache=True)
def _lagrange_weights_parallel(Y, lower, width, n_cells, p):
    return _lagrange_weights(Y, lower, width, n_cells, p)


@njit(cache=True)
def _lagrange_weights_serial(Y, lower, width, n_cells, p):
    return _lagrange_weights(Y, lower, width, n_cells, p)


@njit(inline="always")
def _row(first, weights, strides, i, digits):
    """The stencil row of point i at outer node numbers ``digits[:d-1]``: (flat index of its
    first node, the outer weight prod_{k < d-1} L_{m_k}); the row's p nodes along the last
    dimension follow contiguously (stride 1)."""
    d = first.shape[1]
    index = first[i, d - 1]
    weight = 1.0
    for k in range(d - 1):
        index += (first[i, k] + digits[k]) * strides[k]
        weight *= weights[i, k, digits[k]]
    return index, weight


@njit(inline="always")
def _next_row(digits, p):
    """The next of a stencil's p^(d-1) rows, dimension d-2 fastest (an odometer over
    ``digits[:d-1]``: no integer division, which was most of the time of spreading and
    gathering)."""
    k = digits.shape[0] - 2
    if k < 0:
        return
    digits[k] += 1
    while digits[k] == p and k > 0:
        digits[k] = 0
        k -= 1
        digits[k] += 1


@njit(inline="always")
def _spread(first, weights, strides, p, n_first, size, charges, strips):
    """g_q(x) = sum_i W_i(x) c_iq for each of the r charge sets (charges: n x r; out: r x
    size), row by row of each stencil (the last dimension innermost, contiguous). The first
    dimension's ``n_first`` nodes are cut into ``strips`` ranges, a thread each; a thread
    adds, in point order, the part of every stencil that falls in its range. Every node's sum
    therefore runs in point order: the same bits for any number of strips or threads."""
    n, d = first.shape
    r = charges.shape[1]
    grid = np.zeros((r, size))
    for s in prange(strips):
        low = s * n_first // strips
        high = (s + 1) * n_first // strips
        digits = np.empty(d, dtype=np.int64)
        for i in range(n):
            if first[i, 0] >= high or first[i, 0] + p <= low:
                continue
            # 1-D: the strip cuts the row itself; otherwise whole rows are in or out
            m_low = max(0, low - first[i, 0]) if d == 1 else 0
            m_high = min(p, high - first[i, 0]) if d == 1 else p
            digits[:] = 0
            for _ in range(p ** (d - 1)):
                if d == 1 or low <= first[i, 0] + digits[0] < high:
                    index, outer = _row(first, weights, strides, i, digits)
                    for q in range(r):
                        charge = outer * charges[i, q]
                        for m in range(m_low, m_high):
                            grid[q, index + m] += weights[i, d - 1, m] * charge
                _next_row(digits, p)
    return grid


@njit(parallel=True, cache=True)
def _spread_parallel(first, weights, strides, p, n_first, size, charges):
    return _spread(first, weights, strides, p, n_first, size, charges, SPREAD_STRIPS)


@njit(cache=True)
def _spread_serial(first, weights, strides, p, n_first, size, charges):
    return _spread(first, weights, strides, p, n_first, size, charges, 1)


@njit(inline="always")
def _gather(first, weights, slopes, strides, p, values):
    """phi_r(y_i) = sum_x W_i(x) f_r(x) and its gradient sum_x grad W_i(x) f_r(x) for every
    point i and potential r (values: size x r; out: n x r x (1 + d), value then gradient),
    row by row of each stencil: along a row (the last dimension, contiguous) the sums of
    L_m f and L'_m f, then times the outer weight (value, last derivative) or the outer
    weight with one factor replaced by its slope (the other derivatives)."""
    n, d = first.shape
    r = values.shape[1]
    last = d - 1
    out = np.zeros((n, r, 1 + d))
    for i in prange(n):
        digits = np.zeros(d, dtype=np.int64)  # m_k of the row, per thread
        along = np.empty(r)
        slope = np.empty(r)
        partials = np.empty(max(last, 1))
        for _ in range(p ** (d - 1)):
            index, outer = _row(first, weights, strides, i, digits)
            for k in range(last):  # d W / dy_k: the k-th outer factor by its slope
                partial = slopes[i, k, digits[k]]
                for j in range(last):
                    if j != k:
                        partial *= weights[i, j, digits[j]]
                partials[k] = partial
            along[:] = 0.0
            slope[:] = 0.0
            for m in range(p):
                for q in range(r):
                    value = values[index + m, q]
                    along[q] += weights[i, last, m] * value
                    slope[q] += slopes[i, last, m] * value
            for q in range(r):
                out[i, q, 0] += outer * along[q]
                out[i, q, d] += outer * slope[q]
                for k in range(last):
                    out[i, q, 1 + k] += partials[k] * along[q]
            _next_row(digits, p)
    return out


@njit(parallel=True, cache=True)
def _gather_parallel(first, weights, slopes, strides, p, values):
    return _gather(first, weights, slopes, strides, p, values)


@njit(cache=True)
def _gather_serial(first, weights, slopes, strides, p, values):
    return _gather(first, weights, slopes, strides, p, values)


def circular_offsets(grid: Grid) -> list[np.ndarray]:
    """Per dimension k, the offset Delta_k l_k at circular index 0..L_k-1 (l_k = index for
    index < N_k, index - L_k for index > L_k - N_k) and NaN at the unused middle indices."""
    offsets = []
    for n_nodes, length, step in zip(grid.n_nodes, grid.fft_shape, grid.node_step, strict=True):
        index = np.arange(length)
        lag = np.where(index < n_nodes, index, index - length).astype(np.float64)
        lag[(index >= n_nodes) & (index <= length - n_nodes)] = np.nan
        offsets.append(lag * step)
    return offsets


def kernel_spectrum(
    grid: Grid, kernels: Callable[[list[np.ndarray]], np.ndarray], workers: int = -1,
    fft_dtype=np.float64,
) -> np.ndarray:
    """rfftn over the padded grid of the r kernels sampled at :func:`circular_offsets`
    (r x L_1 x .. x L_{d-1} x (L_d // 2 + 1), complex, in ``fft_dtype``'s precision): depends
    on the grid only through its
    node steps Delta_k and node counts N_k, so a caller may keep it for later calls on a grid
    with the same ones (:func:`kernel_sums`' ``spectrum``)."""
    sampled = kernels(circular_offsets(grid))
    length = grid.fft_shape
    if sampled.shape[1:] != length:
        raise ValueError(f"kernels gave shape {sampled.shape[1:]}, expected {length}")
    return scipy.fft.rfftn(sampled.astype(fft_dtype), axes=tuple(range(1, len(length) + 1)),
                           workers=workers)


def _forward(charges: np.ndarray, length: tuple[int, ...], workers: int) -> np.ndarray:
    """rfftn over the last d = len(length) axes of ``charges`` (r x N_1 x .. x N_d), zero
    padded to ``length``, one axis at a time: each transform runs only over the rows not yet
    known to be zero (N_k of L_k along the axes still unpadded)."""
    d = len(length)
    out = scipy.fft.rfft(charges, n=length[-1], axis=-1, workers=workers)
    for k in range(d - 2, -1, -1):
        axis = charges.ndim - d + k
        out = scipy.fft.fft(out, n=length[k], axis=axis, workers=workers, overwrite_x=True)
    return out


def _inverse(spectrum: np.ndarray, length: tuple[int, ...], shape: tuple[int, ...],
             workers: int) -> np.ndarray:
    """irfftn(spectrum, s=length) over the last d axes, cut to the first N_k indices, one axis
    at a time: each transform keeps only the rows the cut keeps."""
    d = len(length)
    out = spectrum
    for k in range(d - 1):
        axis = out.ndim - d + k
        out = scipy.fft.ifft(out, axis=axis, workers=workers, overwrite_x=True)
        out = out[(slice(None),) * axis + (slice(0, shape[k]),)]
    out = scipy.fft.irfft(out, n=length[-1], axis=-1, workers=workers)
    return out[..., : shape[-1]]


def kernel_sums(
    Y: np.ndarray,
    grid: Grid,
    kernels: Callable[[list[np.ndarray]], np.ndarray] | None,
    workers: int = -1,
    spectrum: np.ndarray | None = None,
    charges: np.ndarray | None = None,
    fft_dtype=np.float64,
) -> np.ndarray:
    """phi_r(y_i) = sum_j K_r(y_i - y_j) (j = i included) and its gradient in y_i, by
    interpolation on ``grid``: n x r x (1 + d), [:, r, 0] the value, [:, r, 1 + k] the
    derivative along k of the interpolant (sum_x dW_i(x)/dy_ik f_r(x); its error is one power
    of h above the value's).

    ``charges`` (n x r, default unit charges, r = 1) gives the potentials of r charge sets,
    phi_q(y_i) = sum_j K(y_i - y_j) c_jq, of one kernel (or of r kernels for one set).

    ``kernels(offsets)`` returns the r kernels sampled on the grid of the offsets of
    :func:`circular_offsets` (one 1-D array per dimension, NaN where unused): an
    r x L_1 x .. x L_d array, which must hold 0 (or any finite value) where an offset is NaN.
    ``spectrum``, when given, is :func:`kernel_spectrum` of these kernels on a grid with the
    same node steps and counts (``kernels`` is then not called), in the precision of
    ``fft_dtype`` (float64 or float32, the transforms' precision: module docstring).
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    d = Y.shape[1]
    if not 1 <= d <= MAX_DIMS:
        raise ValueError(f"grid interpolation needs 1 to {MAX_DIMS} dimensions, got {d}")
    p = grid.stencil
    shape = grid.n_nodes
    strides = np.array([int(np.prod(shape[k + 1 :])) for k in range(d)], dtype=np.int64)
    parallel = Y.shape[0] >= PARALLEL_FROM
    lagrange = _lagrange_weights_parallel if parallel else _lagrange_weights_serial
    first, weights, slopes = lagrange(Y, grid.lower, grid.cell_width, grid.n_cells, p)
    charges = np.ones((Y.shape[0], 1)) if charges is None else np.ascontiguousarray(charges)
    if charges.ndim != 2 or charges.shape[0] != Y.shape[0]:
        raise ValueError(f"charges of shape {charges.shape}, expected ({Y.shape[0]}, r)")
    spread = _spread_parallel if parallel else _spread_serial
    grids = spread(first, weights, strides, p, shape[0], int(np.prod(shape)), charges)
    grids = grids.reshape(charges.shape[1], *shape)
    length = grid.fft_shape
    if spectrum is None:
        spectrum = kernel_spectrum(grid, kernels, workers, fft_dtype)
    expected = (*length[:-1], length[-1] // 2 + 1)
    if spectrum.shape[1:] != expected:
        raise ValueError(f"kernel spectrum of shape {spectrum.shape[1:]}, expected {expected}")
    if spectrum.real.dtype != np.dtype(fft_dtype):
        raise ValueError(f"kernel spectrum of dtype {spectrum.dtype} for FFTs in "
                         f"{np.dtype(fft_dtype)}")
    if spectrum.shape[0] > 1 and grids.shape[0] > 1:
        raise ValueError(f"{spectrum.shape[0]} kernels and {grids.shape[0]} charge sets: one of "
                         "them must be 1")
    transformed = _forward(grids.astype(fft_dtype), length, workers)
    convolved = _inverse(spectrum * transformed, length, shape, workers)
    # node-major (size x r): a stencil row's r potentials lie together in memory
    values = np.ascontiguousarray(convolved.reshape(convolved.shape[0], -1).T, dtype=np.float64)
    gather = _gather_parallel if parallel else _gather_serial
    return gather(first, weights, slopes, strides, p, values)
