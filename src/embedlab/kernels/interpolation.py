"""Sums of a translation-invariant kernel over all points, by grid interpolation and FFT.

For n points y_1..y_n in R^d (d <= 3), unit charges and r kernels K_1..K_r (smooth,
translation-invariant: K(y_i, y_j) = K(y_i - y_j)), this module computes the potentials and
their gradients

    phi_r(y_i) = sum_j K_r(y_i - y_j)        (the term j = i included),   grad phi_r(y_i)

(or, for one kernel and r charge sets c_jr, phi_r(y_i) = sum_j K(y_i - y_j) c_jr)

in O(n p^d d r + r L log L) instead of O(n^2 r), after Linderman, Rachh, Hoskins, Steinerberger
and Kluger, "Fast interpolation-based t-SNE for improved visualization of single-cell RNA-seq
data", Nature Methods 16, 243-245 (2019) (FIt-SNE):

* Grid. Along dimension k the points lie in [lo_k, lo_k + E_k], cut into G_k boxes of width
  h_k = E_k / G_k. Each box carries p interpolation nodes at the centres of p equal
  sub-intervals, x = lo_k + h_k (b + (m + 1/2) / p), m = 0..p-1, so the N_k = G_k p nodes of
  the dimension are equispaced with step Delta_k = h_k / p (across box boundaries too).
* Interpolation. A point in box b with local coordinate u = (y - lo) / h - b in [0, 1] has the
  Lagrange weights on the nodes u_m = (m + 1/2) / p of its box,
      L_m(u) = prod_{l != m} (u - u_l) / (u_m - u_l),
  and in d dimensions the tensor products W_i(x) = prod_k L_{m_k}(u_ik) on the p^d nodes x
  of its box. Interpolating y -> K(x - y) and x -> K(x - y) on these nodes gives
      phi(y_i) ~= sum_x W_i(x) sum_x' K(x - x') sum_j W_j(x') = gather(K * spread(1)).
  The error of one interpolation is at most max |d^p K / dy^p| h^p / p! x max_u prod_m
  |u - u_m| per dimension: it falls as h^p, so refining the grid (smaller boxes) or more
  nodes per box (larger p) reduces it, as long as the boxes are not wider than the scale on
  which K varies (equispaced interpolation of high order diverges in wide boxes, Runge).
  The gradient is that of the interpolant, grad phi(y_i) ~= sum_x grad W_i(x) f(x) with
  d L_m / dy = L'_m(u) / h: one power of h less accurate.
* Convolution. The node values are K at node differences (x - x')_k = Delta_k l_k with
  |l_k| < N_k: a d-dimensional Toeplitz product. Zero padding each dimension to a length
  L_k >= 2 N_k - 1 (scipy.fft.next_fast_len) embeds it in a circulant one, whose product is
  irfftn(rfftn(spread) rfftn(K~)) with K~ the kernel at the circular offsets l_k (index
  l_k mod L_k; the unused middle indices hold 0). ``scipy.fft`` runs it on all cores, one axis
  at a time so that each 1-D transform skips the rows known to be zero (forward) or not
  wanted (inverse): ~25 % less work in 2-D than the full rfftn / irfftn. rfftn(K~) depends
  only on the node steps and counts: :func:`kernel_spectrum` computes it for a caller to keep
  (:mod:`embedlab.kernels.neighbour_fft` keeps the last one).

Spreading is parallel over strips of boxes (a box's nodes are its own, so no two threads add
to the same node) and each node sums its points in point order: deterministic, the same bits
as one serial pass; the weights and the gathering are parallel over points from
``PARALLEL_FROM`` points, each writing only its own row, and scipy's FFT gives the
same bits on any number of workers (checked on 1 and 2): the result does not depend on the
thread count. Everything is float64.

The kernels are given as a function of the offsets (one 1-D array per dimension, in
coordinate units), so the caller decides what is sampled (the neighbour
kernels: :mod:`embedlab.kernels.neighbour_fft`).
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
SPREAD_STRIPS = 16  # box strips of the parallel spread (a thread each; any count, same bits)


@dataclass(frozen=True)
class Grid:
    """G_k boxes of width h_k from lo_k along each dimension, p nodes per box."""

    lower: np.ndarray  # lo_k, (d,)
    box_width: np.ndarray  # h_k, (d,)
    n_boxes: np.ndarray  # G_k, (d,) int64
    n_nodes_per_box: int  # p

    @property
    def n_nodes(self) -> tuple[int, ...]:
        """N_k = G_k p nodes per dimension."""
        return tuple(int(g) * self.n_nodes_per_box for g in self.n_boxes)

    @property
    def node_step(self) -> np.ndarray:
        """Delta_k = h_k / p."""
        return self.box_width / self.n_nodes_per_box

    @property
    def fft_shape(self) -> tuple[int, ...]:
        """L_k >= 2 N_k - 1, a fast length for scipy.fft."""
        return tuple(scipy.fft.next_fast_len(2 * n - 1, real=True) for n in self.n_nodes)


def fft_points(n_boxes, n_nodes_per_box: int) -> int:
    """prod_k (2 N_k - 1): the size of one padded grid for these box counts (its memory and
    FFT cost), before rounding each L_k up to a fast length."""
    # Python integers: a blown-up map's box counts must not wrap around in int64
    return math.prod(2 * int(g) * n_nodes_per_box - 1 for g in n_boxes)


def make_grid(Y: np.ndarray, n_boxes, n_nodes_per_box: int, box_width=None) -> Grid:
    """The grid from the lowest point of ``Y`` (n x d, finite) with ``n_boxes[k]`` boxes along
    k, of width ``box_width[k]`` (G_k h_k must cover the points' extent E_k) or, by default,
    h_k = E_k / G_k. A dimension where all points coincide gets boxes of width 1 by default
    (any width is exact there)."""
    lower = Y.min(axis=0)
    extent = Y.max(axis=0) - lower
    n_boxes = np.asarray(n_boxes, dtype=np.int64)
    if box_width is None:
        width = np.where(extent > 0, extent / n_boxes, 1.0)
    else:
        width = np.broadcast_to(np.asarray(box_width, dtype=np.float64), extent.shape).copy()
        if not (width > 0).all() or (n_boxes * width < extent * (1 - 1e-12)).any():
            raise ValueError(f"{n_boxes.tolist()} boxes of width {width.tolist()} do not "
                             f"cover the extent {extent.tolist()}")
    return Grid(lower, width, n_boxes, int(n_nodes_per_box))


@njit(inline="always")
def _lagrange_weights(Y, lower, width, n_boxes, p):
    """(box index (n, d), weights L_m(u) (n, d, p), their derivatives d L_m(u) / dy =
    L'_m(u) / h (n, d, p)) of every point along every dimension."""
    n, d = Y.shape
    boxes = np.empty((n, d), dtype=np.int64)
    weights = np.empty((n, d, p))
    slopes = np.empty((n, d, p))
    nodes = (np.arange(p) + 0.5) / p
    denominators = np.ones(p)
    for m in range(p):
        for ell in range(p):
            if ell != m:
                denominators[m] *= nodes[m] - nodes[ell]
    for i in prange(n):
        for k in range(d):
            x = (Y[i, k] - lower[k]) / width[k]
            b = min(max(int(math.floor(x)), 0), n_boxes[k] - 1)
            u = x - b
            boxes[i, k] = b
            for m in range(p):
                value = 1.0
                slope = 0.0  # d/du prod_{l != m} (u - u_l), by the product rule
                for ell in range(p):
                    if ell != m:
                        slope = slope * (u - nodes[ell]) + value
                        value *= u - nodes[ell]
                weights[i, k, m] = value / denominators[m]
                slopes[i, k, m] = slope / (denominators[m] * width[k])
    return boxes, weights, slopes


@njit(parallel=True, cache=True)
def _lagrange_weights_parallel(Y, lower, width, n_boxes, p):
    return _lagrange_weights(Y, lower, width, n_boxes, p)


@njit(cache=True)
def _lagrange_weights_serial(Y, lower, width, n_boxes, p):
    return _lagrange_weights(Y, lower, width, n_boxes, p)


@njit(inline="always")
def _node(boxes, weights, strides, p, i, digits):
    """The node of point i's box with per-dimension node numbers ``digits``: (flat node
    index, tensor weight)."""
    d = boxes.shape[1]
    index = 0
    weight = 1.0
    for k in range(d - 1, -1, -1):
        m = digits[k]
        index += (boxes[i, k] * p + m) * strides[k]
        weight *= weights[i, k, m]
    return index, weight


@njit(inline="always")
def _next_node(digits, p):
    """The next of a box's p^d nodes, the last dimension fastest (an odometer: no integer
    division, which was most of the time of spreading and gathering)."""
    k = digits.shape[0] - 1
    digits[k] += 1
    while digits[k] == p and k > 0:
        digits[k] = 0
        k -= 1
        digits[k] += 1


@njit(inline="always")
def _spread(boxes, weights, strides, p, size, charges, strips):
    """g_q(x) = sum_i W_i(x) c_iq for each of the r charge sets (charges: n x r; out: r x
    size). A box's p^d nodes are its own, so the grid splits by boxes without conflicts:
    ``strips`` ranges of the first dimension's boxes, one thread each, each taking its points
    in point order; every node's sum therefore runs in point order, the same bits for any
    number of strips or threads."""
    n, d = boxes.shape
    r = charges.shape[1]
    grid = np.zeros((r, size))
    n_first = boxes[:, 0].max() + 1 if n > 0 else 0
    for s in prange(strips):
        low = s * n_first // strips
        high = (s + 1) * n_first // strips
        digits = np.empty(d, dtype=np.int64)
        for i in range(n):
            if not low <= boxes[i, 0] < high:
                continue
            digits[:] = 0
            for _ in range(p**d):
                index, weight = _node(boxes, weights, strides, p, i, digits)
                for q in range(r):
                    grid[q, index] += weight * charges[i, q]
                _next_node(digits, p)
    return grid


@njit(parallel=True, cache=True)
def _spread_parallel(boxes, weights, strides, p, size, charges):
    return _spread(boxes, weights, strides, p, size, charges, SPREAD_STRIPS)


@njit(cache=True)
def _spread_serial(boxes, weights, strides, p, size, charges):
    return _spread(boxes, weights, strides, p, size, charges, 1)


@njit(inline="always")
def _gather(boxes, weights, slopes, strides, p, values):
    """phi_r(y_i) = sum_x W_i(x) f_r(x) and its gradient sum_x grad W_i(x) f_r(x) for every
    point i and potential r (values: r x size; out: n x r x (1 + d), value then gradient)."""
    n, d = boxes.shape
    r = values.shape[0]
    out = np.zeros((n, r, 1 + d))
    for i in prange(n):
        digits = np.zeros(d, dtype=np.int64)  # m_k of the node, per thread
        for _ in range(p**d):
            index, weight = _node(boxes, weights, strides, p, i, digits)
            for q in range(r):
                out[i, q, 0] += weight * values[q, index]
            for k in range(d):  # d W / dy_k: the k-th factor replaced by its slope
                partial = slopes[i, k, digits[k]]
                for j in range(d):
                    if j != k:
                        partial *= weights[i, j, digits[j]]
                for q in range(r):
                    out[i, q, 1 + k] += partial * values[q, index]
            _next_node(digits, p)
    return out


@njit(parallel=True, cache=True)
def _gather_parallel(boxes, weights, slopes, strides, p, values):
    return _gather(boxes, weights, slopes, strides, p, values)


@njit(cache=True)
def _gather_serial(boxes, weights, slopes, strides, p, values):
    return _gather(boxes, weights, slopes, strides, p, values)


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
    grid: Grid, kernels: Callable[[list[np.ndarray]], np.ndarray], workers: int = -1
) -> np.ndarray:
    """rfftn over the padded grid of the r kernels sampled at :func:`circular_offsets`
    (r x L_1 x .. x L_{d-1} x (L_d // 2 + 1), complex): depends on the grid only through its
    node steps Delta_k and node counts N_k, so a caller may keep it for later calls on a grid
    with the same ones (:func:`kernel_sums`' ``spectrum``)."""
    sampled = kernels(circular_offsets(grid))
    length = grid.fft_shape
    if sampled.shape[1:] != length:
        raise ValueError(f"kernels gave shape {sampled.shape[1:]}, expected {length}")
    return scipy.fft.rfftn(sampled, axes=tuple(range(1, len(length) + 1)), workers=workers)


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
    same node steps and counts (``kernels`` is then not called).
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    d = Y.shape[1]
    if not 1 <= d <= MAX_DIMS:
        raise ValueError(f"grid interpolation needs 1 to {MAX_DIMS} dimensions, got {d}")
    p = grid.n_nodes_per_box
    shape = grid.n_nodes
    strides = np.array([int(np.prod(shape[k + 1 :])) for k in range(d)], dtype=np.int64)
    parallel = Y.shape[0] >= PARALLEL_FROM
    lagrange = _lagrange_weights_parallel if parallel else _lagrange_weights_serial
    boxes, weights, slopes = lagrange(Y, grid.lower, grid.box_width, grid.n_boxes, p)
    charges = np.ones((Y.shape[0], 1)) if charges is None else np.ascontiguousarray(charges)
    if charges.ndim != 2 or charges.shape[0] != Y.shape[0]:
        raise ValueError(f"charges of shape {charges.shape}, expected ({Y.shape[0]}, r)")
    spread = _spread_parallel if parallel else _spread_serial
    grids = spread(boxes, weights, strides, p, int(np.prod(shape)), charges)
    grids = grids.reshape(charges.shape[1], *shape)
    length = grid.fft_shape
    if spectrum is None:
        spectrum = kernel_spectrum(grid, kernels, workers)
    expected = (*length[:-1], length[-1] // 2 + 1)
    if spectrum.shape[1:] != expected:
        raise ValueError(f"kernel spectrum of shape {spectrum.shape[1:]}, expected {expected}")
    if spectrum.shape[0] > 1 and grids.shape[0] > 1:
        raise ValueError(f"{spectrum.shape[0]} kernels and {grids.shape[0]} charge sets: one of "
                         "them must be 1")
    convolved = _inverse(spectrum * _forward(grids, length, workers), length, shape, workers)
    values = np.ascontiguousarray(convolved.reshape(convolved.shape[0], -1))
    gather = _gather_parallel if parallel else _gather_serial
    return gather(boxes, weights, slopes, strides, p, values)
