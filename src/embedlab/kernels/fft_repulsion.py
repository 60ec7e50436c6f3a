"""The neighbour kernels' repulsive potentials on an FFT grid (FIt-SNE's interpolation).

For uniform repulsive weights, the repulsion of :func:`embedlab.kernels.neighbour_fft.
fft_pair_fields` is one sum of a translation-invariant kernel of delta = y_i - y_j,
K_0(delta) = w(a, b) e^{-c} (a = ||delta_s||^2, b = ||delta_t||^2, the shift c of
:func:`~embedlab.kernels.output_kernels.log_weight_bound`), and its gradient:

    phi_0(y) = sum_j K_0(y - y_j)   and   grad phi_0(y), at y = y_i,

which :func:`potentials` computes by :func:`embedlab.kernels.interpolation.kernel_sums`
(FIt-SNE, Linderman et al. 2019) in O(n p^d + L log L) on a grid over the d space columns
(d <= 3; SNEST's time column below). The gradient is that of the interpolant (the
derivatives of the Lagrange weights, see :mod:`embedlab.kernels.interpolation`), one power
of the node step less accurate than the value, hence stencils of p = 6 nodes on 6 nodes per
unit by default; in exchange one kernel and one charge grid are transformed, 3 FFTs per call
whatever d, 2 when the kernel's spectrum is kept from the call before (below; sampling the d
force kernels w alpha delta_k instead took 2 d + 3, and for the same error ran 1.5-1.7x
slower in 2-D, benchmarks/README.md).

SNEST's time (one column) is not put on the FFT grid: its kernel is a product,
K_0 = exp(b - c) / (1 + a), with the shift c = b_max = E_t^2, and exp(dt^2) varies on the
scale 1 / (2 E_t), so equispaced time boxes would need ~2 E_t^2 boxes (a 3-D grid of R^{2,1}
over the cap from n ~ 2000). Instead the time factor is interpolated at m Chebyshev nodes
tau_a on [min t, max t] (:func:`time_nodes`, m = 4 + ceil(4.5 E_t) by default: value error
below 1e-5 of the largest sampled value for E_t from 0.25 to 30, measured; 5 + ceil(5.5 E_t)
for 1e-7), and the space potentials of the Cauchy kernel 1 / (1 + a) carry charges mixed by
the m x m time factors exp((tau_b - tau_a)^2 - c), through their SVD truncated at
TIME_RANK_TOL (:func:`_separable_time_sums`): r = 5-9 space convolutions for m = 7-40 nodes,
on the space grid, whose kernel spectrum is t-SNE's and is kept between calls. Every time
factor is <= 1 (nodes within the points' extent), so nothing overflows however large E_t is.

Space grid (:class:`FFTSettings`): along a space column k with extent E_k the kernels change on
the scale 1 (1/(1 + a) and exp(-a) have O(1) derivatives); it gets G_k = max(min_grid_size,
ceil(nodes_per_unit E_k)) cells between equispaced nodes, and each point interpolates on the
p = ``n_interpolation_points`` nodes around it per dimension (a stencil centred on the point,
:mod:`embedlab.kernels.interpolation`). Along a column with more than 20 cells, the cells have
the fixed width Delta = 1 / nodes_per_unit, from the lowest point, and G_k is rounded up to a
ladder (ceil(20 x 1.05^m), :func:`grid_cells`): the node step and counts then stay the same
from one epoch to the next while the map's extent changes by less than ~5 %, and the FFT of
the sampled kernel is kept between calls (the last one, :func:`_kernel_spectrum`; the sampled
kernels have the shift c = 0). Otherwise (a compact map's few cells) the cells fit the extent,
Delta = E_k / G_k. The defaults, p = 6 on 6 nodes per unit, are the cheapest of a sweep that
keep the gradient error below 1e-3 for every kernel (6.6e-4 at worst, t-SNE R^2; FIt-SNE's
boxes needed p = 9 on 9 nodes per unit for it: 2.2x the grid, 2.25x the nodes per point in
2-D; benchmarks/README.md). The grid's size limit, ``max_grid_points``, is the caller's to
apply (:func:`embedlab.kernels.neighbour_fft.fft_pair_fields` falls back to the exact
fields). A new output kernel needs its scale here (:func:`grid_cells`) besides its branches in
:mod:`embedlab.kernels.output_kernels`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from embedlab.kernels import interpolation
from embedlab.kernels.fastmath import FASTMATH
from embedlab.kernels.output_kernels import SNEST, TSNE, shifted_weight

SAMPLE_PARALLEL_FROM = 2**20  # sampled kernel values: below this, one thread
TIME_RANK_TOL = 1e-7  # SNEST's time-factor matrix: singular values kept, relative to the largest
LADDER_FROM = 20  # cell counts above this are rounded up to ceil(20 x 1.05^m) (grid_cells)
LADDER_RATIO = 1.05
_SPECTRUM: dict = {}  # the last kernel spectrum, by (kernel, node steps, node counts)


@dataclass(frozen=True)
class FFTSettings:
    """Grid of the approximate repulsion (defaults: gradient error < 1e-3, benchmarks/README)."""

    n_interpolation_points: int = 6  # p, nodes of a point's stencil per dimension
    nodes_per_unit: float = 6.0  # 1 / Delta, grid nodes per unit of extent (the kernels' scale)
    min_grid_size: int = 1  # cells per dimension at least
    max_grid_points: int = 2**25  # padded grid points (~40 bytes each at the peak) beyond
    # which a call falls back to exact
    # SNEST's time: min_time_nodes + ceil(time_nodes_per_unit x E_t) Chebyshev nodes (value
    # error of exp(dt^2 - c) below 1e-5 for E_t from 0.25 to 30, module docstring)
    time_nodes_per_unit: float = 4.5
    min_time_nodes: int = 4

    def __post_init__(self) -> None:
        checks = {
            "n_interpolation_points": 1 <= self.n_interpolation_points <= 16,
            "nodes_per_unit": self.nodes_per_unit > 0,
            "min_grid_size": self.min_grid_size >= 1,
            "max_grid_points": self.max_grid_points >= 1,
            "time_nodes_per_unit": self.time_nodes_per_unit > 0,
            "min_time_nodes": self.min_time_nodes >= 2,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"FFTSettings.{name} = {getattr(self, name)!r} is out of range")


def _ladder(cells: np.ndarray) -> np.ndarray:
    """Each cell count rounded up to the ladder 1, 2, .., LADDER_FROM, then
    ceil(LADDER_FROM LADDER_RATIO^m): a map that grows by a few percent keeps its grid."""
    out = cells.copy()
    big = cells > LADDER_FROM
    # the least m with LADDER_FROM LADDER_RATIO^m > G - 1, i.e. ceil(..) >= G
    steps = np.floor(np.log((cells[big] - 1) / LADDER_FROM) / math.log(LADDER_RATIO)) + 1
    out[big] = np.maximum(cells[big], np.ceil(LADDER_FROM * LADDER_RATIO**steps))
    return out


def grid_cells(Y: np.ndarray, settings: FFTSettings) -> np.ndarray:
    """G_k of the module docstring for the (finite) space columns ``Y``, rounded up to the
    ladder of :func:`_ladder`."""
    lower, upper = interpolation.column_bounds(np.ascontiguousarray(Y, dtype=np.float64))
    wanted = np.ceil(settings.nodes_per_unit * (upper - lower))
    wanted = np.minimum(wanted, 2.0**40)  # keeps the int conversion of a blown-up map finite
    return _ladder(np.maximum(settings.min_grid_size, wanted).astype(np.int64))


def cell_widths(Y: np.ndarray, settings: FFTSettings, cells: np.ndarray) -> np.ndarray:
    """Delta_k: 1 / nodes_per_unit along a column with more than LADDER_FROM cells (the same
    node step every call, so the kernel's spectrum can be kept); otherwise E_k / G_k, the
    cells fitting the extent (a compact map's small grid: nodes up to ~2x denser for a few
    units of extent, cheap to recompute), 1 where all points coincide."""
    lower, upper = interpolation.column_bounds(np.ascontiguousarray(Y, dtype=np.float64))
    extent = upper - lower
    fitted = np.where(extent > 0, extent / cells, 1.0)
    return np.where(cells > LADDER_FROM, 1.0 / settings.nodes_per_unit, fitted)


def time_nodes(t: np.ndarray, settings: FFTSettings) -> np.ndarray:
    """SNEST's time nodes: min_time_nodes + ceil(time_nodes_per_unit x E_t) Chebyshev points
    (second kind, both ends included) on [min t, max t]; one node where all times coincide."""
    lower, extent = float(t.min()), float(np.ptp(t))
    if extent == 0.0:
        return np.array([lower])
    count = settings.min_time_nodes + math.ceil(settings.time_nodes_per_unit * extent)
    nodes = lower + extent * (1.0 - np.cos(np.pi * np.arange(count) / (count - 1))) / 2.0
    nodes[-1] = t.max()  # the end points exactly (no factor above 1, no time outside)
    return nodes


def _chebyshev_weights(m: int) -> np.ndarray:
    """Barycentric weights of m Chebyshev points of the second kind: (-1)^a, halved at both
    ends."""
    weights = (-1.0) ** np.arange(m)
    weights[[0, -1]] *= 0.5
    return weights


@njit(cache=True)
def _barycentric(t, nodes, node_weights):
    """L_a(t_i) (n x m), the Lagrange polynomials of the ``nodes`` at ``t`` by the barycentric
    formula, sum_a w_a / (t - tau_a) normalised (exact at a node). One thread: O(n m), a few
    ms at n = 70,000."""
    n, m = t.shape[0], nodes.shape[0]
    out = np.zeros((n, m))
    for i in range(n):
        hit = -1
        total = 0.0
        for a in range(m):
            diff = t[i] - nodes[a]
            if diff == 0.0:
                hit = a
                break
            out[i, a] = node_weights[a] / diff
            total += out[i, a]
        if hit >= 0:
            out[i, :] = 0.0
            out[i, hit] = 1.0
        else:
            for a in range(m):
                out[i, a] /= total
    return out


def time_interpolation(t: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L_a(t_i), L'_a(t_i)), n x m each: the Lagrange weights of the Chebyshev nodes at the
    times and their derivatives, L' = L D with D_ba = L'_a(tau_b) = (w_a / w_b) / (tau_b -
    tau_a) the nodes' differentiation matrix (exact: L'_a has degree m - 2)."""
    m = nodes.shape[0]
    if m == 1:
        return np.ones((t.shape[0], 1)), np.zeros((t.shape[0], 1))
    node_weights = _chebyshev_weights(m)
    weights = _barycentric(np.ascontiguousarray(t, dtype=np.float64), nodes, node_weights)
    diff = nodes[:, None] - nodes[None, :]
    np.fill_diagonal(diff, 1.0)
    D = node_weights[None, :] / node_weights[:, None] / diff
    np.fill_diagonal(D, 0.0)
    np.fill_diagonal(D, -D.sum(axis=1))
    return weights, weights @ D


@njit(inline="always", fastmath=FASTMATH)
def _sample(kernel, off0, off1, off2, out):
    """out[i0, i1, i2] = w(a, 0) at the space offset (off0[i0], off1[i1], off2[i2]) (unused
    dimensions: a single offset 0; a = its squared length), 0 where an offset is NaN; the
    kernel's own weight (:func:`~embedlab.kernels.output_kernels.shifted_weight`, shift 0)."""
    for i0 in prange(off0.shape[0]):
        for i1 in range(off1.shape[0]):
            for i2 in range(off2.shape[0]):
                a = off0[i0] ** 2 + off1[i1] ** 2 + off2[i2] ** 2
                if math.isnan(a):
                    out[i0, i1, i2] = 0.0
                else:
                    out[i0, i1, i2] = shifted_weight(kernel, a, 0.0, 0.0)


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def _sample_parallel(kernel, off0, off1, off2, out):
    _sample(kernel, off0, off1, off2, out)


@njit(cache=True, fastmath=FASTMATH)
def _sample_serial(kernel, off0, off1, off2, out):
    _sample(kernel, off0, off1, off2, out)


def sampled_kernel(kernel: int):
    """The function of the grid's space offsets giving the kernel's weight w(a, 0) (shift 0:
    t-SNE, SNE, SNEST without time, and SNEST's Cauchy space factor) as a 1 x L_1 x .. x L_d
    array, 0 where an offset is unused (NaN)."""

    def sample(offsets: list[np.ndarray]) -> np.ndarray:
        d = len(offsets)
        lengths = [o.shape[0] for o in offsets]
        padded = [*offsets, *[np.zeros(1)] * (3 - d)]  # a padded dimension has offset 0
        out = np.empty([*lengths, *[1] * (3 - d)])
        entry = _sample_parallel if out.size >= SAMPLE_PARALLEL_FROM else _sample_serial
        entry(kernel, *padded, out)
        return out.reshape(1, *lengths)

    return sample


def fft_dtype(cells: np.ndarray):
    """The FFTs' precision (:mod:`embedlab.kernels.interpolation`): float32 when every space
    column has more than LADDER_FROM cells, i.e. the fixed node step 1 / nodes_per_unit (the
    rounding then ~1e-7 x p / Delta of the largest potential, far below the interpolation
    error: the measured errors of every kernel are the same to 2-3 digits), else float64 (a
    compact map's grid, small and cheap; on a map far smaller than the kernel's scale, such as
    an optimiser's start, float32 rounding over the tiny node step would swamp the field)."""
    return np.float32 if (np.asarray(cells) > LADDER_FROM).all() else np.float64


def _kernel_spectrum(kernel: int, grid: interpolation.Grid, dtype):
    """The FFT of the kernel sampled on ``grid`` (:func:`sampled_kernel`), kept (one, the last)
    for the next call with the same kernel, node steps and node counts: an optimiser's epochs
    on a map that changes little (a fixed step, box counts on a ladder) reuse it, which saves
    sampling the kernel and one of the three FFTs. The same bits either way."""
    key = (kernel, tuple(grid.node_step.tolist()), grid.n_nodes, np.dtype(dtype).name)
    cached = _SPECTRUM.get(key)
    if cached is None:
        cached = interpolation.kernel_spectrum(grid, sampled_kernel(kernel), fft_dtype=dtype)
        _SPECTRUM.clear()
        _SPECTRUM[key] = cached
    return cached


def _separable_time_sums(space: np.ndarray, t: np.ndarray, grid: interpolation.Grid,
                         shift: float, settings: FFTSettings) -> np.ndarray:
    """phi_0(y_i) = sum_j exp((t_i - t_j)^2 - c) / (1 + |s_i - s_j|^2) and its gradient
    (n x (1 + d), space then time), by Chebyshev interpolation in time and the space grid.
    With L_a the Lagrange weights of the time nodes tau_a, T_ba = exp((tau_b - tau_a)^2 - c)
    (every entry <= 1) and Psi(X) the Cauchy potentials of charge sets X on the space grid,

        phi_0(y_i) = sum_ab L_b(t_i) T_ba sum_j L_a(t_j) (1 + |s_i - s_j|^2)^-1;

    T's singular values fall fast (rank ~5-9 of m = 7-40 nodes at 1e-6), so with
    T ~ U_r S_r V_r^T (singular values above TIME_RANK_TOL of the largest),
    phi_0(y_i) = sum_k (L U_r)_ik Psi(L V_r S_r)_ik: r space potentials, computed in blocks
    of charge sets whose padded grids together stay under ``max_grid_points``."""
    nodes = time_nodes(t, settings)
    weights, slopes = time_interpolation(t, nodes)
    U, sigma, Vt = np.linalg.svd(np.exp((nodes[:, None] - nodes[None, :]) ** 2 - shift))
    rank = max(1, int(np.count_nonzero(sigma > TIME_RANK_TOL * sigma[0])))
    charges = weights @ (Vt[:rank].T * sigma[:rank])
    left, left_slope = weights @ U[:, :rank], slopes @ U[:, :rank]
    dtype = fft_dtype(grid.n_cells)
    spectrum = _kernel_spectrum(TSNE, grid, dtype)  # 1 / (1 + a)
    block = max(1, settings.max_grid_points // interpolation.fft_points(grid.n_cells,
                                                                       grid.stencil))
    psi = np.concatenate([
        interpolation.kernel_sums(space, grid, None, spectrum=spectrum,
                                  charges=charges[:, start : start + block], fft_dtype=dtype)
        for start in range(0, rank, block)
    ], axis=1)  # n x r x (1 + d_s)
    out = np.empty((t.shape[0], space.shape[1] + 2))
    out[:, :-1] = np.einsum("nk,nkc->nc", left, psi)
    out[:, -1] = np.einsum("nk,nk->n", left_slope, psi[:, :, 0])
    return out


def potentials(kernel: int, Y: np.ndarray, n_space: int, space: np.ndarray, cells: np.ndarray,
               shift: float, settings: FFTSettings) -> np.ndarray:
    """phi_0(y_i) and grad phi_0(y_i) (n x (1 + d), the value first; module docstring) for the
    embedding ``Y`` (n x d, finite) with its space columns ``space`` (``Y`` itself where every
    column is space) on a grid of ``cells`` (:func:`grid_cells` of ``space``), at the shift
    c = ``shift``."""
    grid = interpolation.make_grid(space, cells, settings.n_interpolation_points,
                                   cell_widths(space, settings, cells))
    if kernel == SNEST and n_space < Y.shape[1]:
        return _separable_time_sums(space, Y[:, n_space], grid, shift, settings)
    # every column is space: the shift is 0 and the kernel w(a, 0)
    dtype = fft_dtype(cells)
    spectrum = _kernel_spectrum(kernel, grid, dtype)
    return interpolation.kernel_sums(Y, grid, None, spectrum=spectrum, fft_dtype=dtype)[:, 0, :]
