"""Neighbour embeddings SNE, t-SNE and SNEST: one objective, three output kernels.

All three minimise KL(P || Q) with q_ij = w_ij / sum_{k != l} w_kl over ordered pairs and
differ only in the output kernel w (SNEST paper, eq. 7-10):

    SNE    (symmetric SNE)  R^d          w = exp(-||y_i - y_j||^2)
    t-SNE                   R^d          w = 1 / (1 + ||y_i - y_j||^2)
    SNEST                   R^{ds,dt}    w = exp(||t_i - t_j||^2) / (1 + ||s_i - s_j||^2)

The kernel, its gradient and their conventions (the factor 4, the log-sum-exp shift) are in
:mod:`embedlab.kernels.neighbour` (``precision="float32"``: its float32 pair arithmetic, see
:class:`NeighbourKL`); the optimiser is :mod:`embedlab.optimize`. Estimators take a
precomputed P (sparse or dense) and follow scikit-learn's conventions; restarts and learning
rate grids belong to the workflow.

Input P: square, finite, non-negative, symmetric (|P - P^T| <= 1e-9 max P), zero diagonal,
no empty row, summing to 1 within 1e-6 (then rescaled to sum exactly 1). P is NOT normalised
silently beyond that tolerance: a P that sums to 2 (e.g. counted twice) is a bug upstream, so
it raises :class:`InvalidAffinityError` naming the field and value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from embedlab.kernels import neighbour as kernel_mod
from embedlab.kernels import neighbour_fft
from embedlab.optimize import DivergenceError, GradientDescent, OptimizeResult, minimize

#: the optimiser's defaults (the SNEST paper's settings): the one home of the estimators' defaults
PAPER = GradientDescent()
#: the approximate repulsion's grid defaults (used only with ``repulsion="fft"``)
FFT = neighbour_fft.FFTSettings()


class InvalidAffinityError(ValueError):
    """The affinity matrix P is not a valid joint distribution over pairs."""


@dataclass(frozen=True)
class OutputKernel:
    """An output similarity w(a, b) of squared space / time distances a, b."""

    name: str
    kernel_id: int
    formula: str
    has_time: bool


OUTPUT_KERNELS = {
    "sne": OutputKernel("sne", kernel_mod.SNE, "exp(-||y_i - y_j||^2)", False),
    "tsne": OutputKernel("tsne", kernel_mod.TSNE, "1 / (1 + ||y_i - y_j||^2)", False),
    "snest": OutputKernel(
        "snest", kernel_mod.SNEST, "exp(||t_i - t_j||^2) / (1 + ||s_i - s_j||^2)", True
    ),
}

SUM_TOLERANCE = 1e-6
SYMMETRY_TOLERANCE = 1e-9


def validate_affinities(P, name: str = "P") -> sp.csr_matrix:
    """Return ``P`` as a new float64 CSR matrix summing to 1 (divided by its sum), or raise
    :class:`InvalidAffinityError` saying what is wrong (see the module docstring). ``P``
    itself is never modified: a float64 CSR input used to be normalised in place, so the
    next fits on one P saw it divided again until its sum rounded to 1 (a sum of 1 - 1.1e-16
    moves some entries by an ulp), and a run's result depended on the runs fitted before it."""
    if sp.issparse(P):
        M = sp.csr_matrix(P, dtype=np.float64, copy=True)
    else:
        dense = np.asarray(P, dtype=np.float64)
        if dense.ndim != 2:
            raise InvalidAffinityError(f"{name}: must be a 2-D matrix, got shape {dense.shape}")
        M = sp.csr_matrix(dense)
    n = M.shape[0]
    if M.shape[0] != M.shape[1] or n < 2:
        raise InvalidAffinityError(f"{name}: must be square with n >= 2, got shape {M.shape}")
    M.sum_duplicates()
    M.eliminate_zeros()
    bad = ~np.isfinite(M.data)
    if bad.any():
        row = int(np.searchsorted(M.indptr, np.flatnonzero(bad)[0], side="right") - 1)
        raise InvalidAffinityError(
            f"{name}: {int(bad.sum())} non-finite values (first in row {row})"
        )
    if (M.data < 0).any():
        raise InvalidAffinityError(f"{name}: negative entries (min {M.data.min():.3g})")
    diagonal = M.diagonal()
    if np.any(diagonal != 0):
        i = int(np.flatnonzero(diagonal)[0])
        raise InvalidAffinityError(f"{name}: non-zero diagonal (P[{i},{i}] = {diagonal[i]:.3g})")
    empty = np.flatnonzero(np.diff(M.indptr) == 0)
    if empty.size:
        raise InvalidAffinityError(
            f"{name}: {empty.size} empty rows (first: row {int(empty[0])}); "
            "an item without neighbours cannot be embedded"
        )
    asym = abs(M - M.T)
    if asym.nnz and asym.max() > SYMMETRY_TOLERANCE * M.data.max():
        raise InvalidAffinityError(f"{name}: not symmetric (max |P - P^T| = {asym.max():.3g})")
    total = float(M.data.sum())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise InvalidAffinityError(
            f"{name}: sums to {total!r}, expected 1 (over ordered pairs i != j, within "
            f"{SUM_TOLERANCE}); normalise it upstream"
        )
    M.data /= total
    M.sort_indices()
    return M


#: float32 evaluation gives way to float64 (for good) once the last REFINE_WINDOW costs, at
#: no exaggeration, spread by at most REFINE_BELOW |KL|: the decrease is then near float32's
#: resolution of the KL (~1e-8 relative on SCHOOL), and the float32 gradient's rounding
#: (~1e-7 relative, not 0 at the minimum) would keep the optimiser from converging
REFINE_WINDOW = 5
REFINE_BELOW = 1e-6


class NeighbourKL:
    """KL(P || Q) for one output kernel, as the optimiser's objective.

    ``objective(Y, exaggeration=1.0) -> (KL(P || Q(Y)), gradient)``, where the gradient is
    that of the exaggerated objective -x sum p log w + log Z (attraction scaled by x); with
    x = 1 it is dKL/dY. ``P`` must already be valid (:func:`validate_affinities`).

    ``precision``: working precision of the kernel's dense pair arithmetic,
    "float64" (the reference) or "float32" (sums in float64;
    :func:`embedlab.kernels.neighbour.pair_fields`); Y, the KL and the gradient are float64
    either way. A float32 objective switches itself to float64 for good once the KL stalls
    within float32's reach (``REFINE_BELOW``): the end of a converging optimisation, its
    convergence test and its final KL are then float64's (without the switch, SNE on SCHOOL
    at rate 10 never met the tolerance and, 3000 epochs after its minimum, drifted away from
    it on float32's rounding). ``float64_from``: the calls made before the switch (None while
    in float32, e.g. for a whole fit that never stalls; 0 for a float64 objective).
    ``repulsion``: "exact" (the O(n^2) pair loop, the default) or "fft" (the repulsion by grid
    interpolation + FFT on the grid ``fft``, the attraction still exact:
    :mod:`embedlab.kernels.neighbour_fft`; the same KL formula, with the approximate Z;
    float64 only).
    """

    def __init__(
        self,
        P: sp.csr_matrix,
        kernel: str,
        n_space: int,
        *,
        precision: str = "float64",
        repulsion: str = "exact",
        fft: neighbour_fft.FFTSettings | None = None,
    ):
        if kernel not in OUTPUT_KERNELS:
            raise ValueError(
                f"unknown output kernel {kernel!r}; expected one of {list(OUTPUT_KERNELS)}"
            )
        if precision not in kernel_mod.PRECISIONS:
            raise ValueError(
                f"precision must be one of {list(kernel_mod.PRECISIONS)}, got {precision!r}"
            )
        neighbour_fft.check_repulsion(repulsion)
        self.repulsion = repulsion
        self.fft = FFT if fft is None else fft
        if repulsion == "fft" and precision != "float64":
            raise ValueError("repulsion='fft' computes in float64; precision must be float64")
        self.kernel = OUTPUT_KERNELS[kernel]
        self.n_space = n_space
        self.precision = precision
        self.float64_from = 0 if precision == "float64" else None
        self.calls = 0
        self._recent: list[float] = []  # the last unexaggerated float32 costs
        self.n = P.shape[0]
        self.parts = kernel_mod.csr_parts(P)
        # the FFT path's P (its points renumbered once)
        self._renumbered = neighbour_fft.RenumberedP.of(self.parts) if repulsion == "fft" else None
        data = self.parts[2]
        self.entropy_term = float(np.sum(data * np.log(data)))  # sum p log p

    def fields(self, Y: np.ndarray, with_cost: bool = True) -> kernel_mod.PairFields:
        """The kernel's sums at Y; ``with_cost=False`` lets the FFT path skip C_att (NaN)."""
        if Y.shape[0] != self.n:
            raise ValueError(f"embedding has {Y.shape[0]} points, P has {self.n}")
        if self.repulsion == "fft":
            return self._renumbered.fields(
                self.kernel.kernel_id, Y, self.n_space, self.fft, with_cost
            )
        precision = self.precision if self.float64_from is None else "float64"
        return kernel_mod.pair_fields(
            self.kernel.kernel_id, Y, self.n_space, self.parts, precision=precision
        )

    def cost(self, Y: np.ndarray) -> float:
        """KL(P || Q(Y))."""
        return self(Y)[0]

    def __call__(
        self, Y: np.ndarray, exaggeration: float = 1.0, with_cost: bool = True
    ) -> tuple[float, np.ndarray]:
        """(KL at Y, gradient with the attraction exaggerated); without ``with_cost`` the KL
        is NaN and, with repulsion="fft", not computed (the gradient is the same)."""
        f = self.fields(Y, with_cost)
        if not (np.isfinite(f.mass) and f.mass > 0 and np.isfinite(f.shift)):
            extent = np.array2string(np.ptp(Y, axis=0), precision=3)
            raise DivergenceError(
                f"{self.kernel.name}: the normaliser Z = {f.mass!r} * exp({f.shift!r}) is not "
                f"finite and positive: the coordinates have blown up (extent per column "
                f"{extent}; {self.n_space} space columns, then time)"
            )
        grad = 4.0 * (exaggeration * f.att - f.rep / f.mass)
        self.calls += 1
        if not with_cost:
            return math.nan, grad
        kl = float(self.entropy_term + f.att_cost + np.log(f.mass) + f.shift)
        if self.float64_from is None:
            recent = self._recent[1 - REFINE_WINDOW :] + [kl] if exaggeration == 1.0 else []
            if len(recent) == REFINE_WINDOW and max(recent) - min(recent) <= REFINE_BELOW * abs(kl):
                self.float64_from = self.calls
            self._recent = recent
        return kl, grad


def initial_embedding(
    n: int, n_space: int, n_time: int, scale: float, scale_time: float, random_state
) -> np.ndarray:
    """The estimators' start: normal space columns (sd ``scale``), then normal time columns
    (sd ``scale_time``), drawn in that order from ``np.random.default_rng(random_state)``
    (another optimiser given this array starts where ours does)."""
    rng = np.random.default_rng(random_state)
    space = rng.normal(0.0, scale, size=(n, n_space))
    time = rng.normal(0.0, scale_time, size=(n, n_time))
    return np.hstack([space, time])


class _NeighbourEmbedding(BaseEstimator):
    """Shared fit logic; subclasses set ``_kernel`` and their dimensions."""

    _kernel = "tsne"

    def _dims(self) -> tuple[int, int]:
        raise NotImplementedError

    def _settings(self) -> GradientDescent:
        return GradientDescent(
            learning_rate=self.learning_rate,
            learning_rate_time=getattr(self, "learning_rate_time", PAPER.learning_rate_time),
            momentum=tuple(self.momentum),
            momentum_epochs=tuple(self.momentum_epochs),
            exaggeration=self.exaggeration,
            exaggeration_epochs=self.exaggeration_epochs,
            min_gain=self.min_gain,
            max_iter=self.max_iter,
            min_iter=self.min_iter,
            tol=self.tol,
            rate_window=self.rate_window,
            plateau_tol=self.plateau_tol,
            abandon_margin=self.abandon_margin,
            cost_every=self.cost_every,
            log_every=self.log_every,
        )

    def _fft_settings(self) -> neighbour_fft.FFTSettings:
        return neighbour_fft.FFTSettings(
            n_interpolation_points=self.n_interpolation_points,
            nodes_per_unit=self.nodes_per_unit,
            min_grid_size=self.min_grid_size,
            max_grid_points=FFT.max_grid_points,
        )

    def _initial(self, n: int, n_space: int, n_time: int) -> np.ndarray:
        scale_time = self.init_scale_time if n_time else 0.0
        return initial_embedding(n, n_space, n_time, self.init_scale, scale_time,
                                 self.random_state)

    def fit(self, P, y=None, reference_cost=None):
        """Embed the items of the affinity matrix ``P`` (n x n; sparse or dense);
        ``reference_cost``: the KL of the best finished run of the same problem, against which
        a losing run is abandoned (``abandon_margin``)."""
        n_space, n_time = self._dims()
        if n_space < 1 or n_time < 0:
            raise ValueError(f"{type(self).__name__}: need >= 1 space and >= 0 time dimensions")
        if self.repulsion == "fft":
            neighbour_fft.check_supported(OUTPUT_KERNELS[self._kernel].kernel_id, n_space, n_time)
        Pv = validate_affinities(P)
        objective = NeighbourKL(
            Pv,
            self._kernel,
            n_space,
            precision=self.precision,
            repulsion=self.repulsion,
            fft=self._fft_settings(),
        )
        Y0 = self._initial(Pv.shape[0], n_space, n_time)
        result: OptimizeResult = minimize(
            objective, Y0, n_space, self._settings(), reference_cost=reference_cost
        )
        self.embedding_ = result.Y
        self.kl_divergence_ = result.cost
        self.float64_from_ = objective.float64_from
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.stop_ = result.stop
        self.cost_trace_ = result.cost_trace
        self.momentum_switches_ = result.momentum_switches
        self.exaggeration_end_ = result.exaggeration_end
        self.n_space_ = n_space
        return self

    def fit_transform(self, P, y=None) -> np.ndarray:
        """:meth:`fit`, then return ``embedding_``."""
        return self.fit(P).embedding_


_COMMON_DOC = """
    Parameters (optimiser: :class:`embedlab.optimize.GradientDescent`)
    ----------
    learning_rate : gamma_s, the space learning rate (paper's driver: 500).
    momentum, momentum_epochs : momentum values and the epochs where they switch.
    exaggeration, exaggeration_epochs : P x exaggeration for the first epochs.
    min_gain : lower bound of the adaptive gains.
    max_iter, min_iter, tol : at most max_iter epochs; stop after min_iter when the spread of
        the last 5 costs is <= tol |E_last - E_first|.
    rate_window, plateau_tol, abandon_margin : the plateau and abandonment tests of
        :mod:`embedlab.optimize` (off by default).
    cost_every : epochs between KL evaluations (default 1; > 1 only for a fixed number of
        epochs, min_iter = max_iter: the FFT path then skips the KL's logs in between, the
        run is the same; cost_trace_ holds NaN there).
    init_scale : standard deviation of the initial space coordinates.
    precision : "float64" (default, the reference) or "float32": working precision of the
        kernel's dense pair arithmetic (:class:`NeighbourKL`); coordinates, sums, KL and
        gradient stay float64.
    log_every : epochs between progress log lines (0: none).
    random_state : seed of the initialisation (numpy Generator).
    repulsion : "exact" (default; the papers' tables) or "fft": the repulsion by grid
        interpolation + FFT (:mod:`embedlab.kernels.neighbour_fft`; at most 3 output dimensions,
        space + time, and one time dimension), the attraction still exact.
    n_interpolation_points, nodes_per_unit, min_grid_size : the FFT grid (p nodes of a
        point's stencil per dimension; grid nodes per unit of extent; cells per dimension at
        least); only with repulsion="fft".

    Attributes
    ----------
    embedding_, kl_divergence_ (KL of embedding_), n_iter_, converged_, stop_ (the test that
    ended the run), cost_trace_ (KL before each epoch's step), momentum_switches_,
    exaggeration_end_, float64_from_ (the first epoch evaluated in float64: 0 in float64,
    None if a float32 fit never stalled; see :class:`NeighbourKL`).
"""


class _EuclideanEmbedding(_NeighbourEmbedding):
    """SNE and t-SNE: ``n_components`` space dimensions, no time."""

    def __init__(
        self,
        n_components=2,
        *,
        learning_rate=PAPER.learning_rate,
        momentum=PAPER.momentum,
        momentum_epochs=PAPER.momentum_epochs,
        exaggeration=PAPER.exaggeration,
        exaggeration_epochs=PAPER.exaggeration_epochs,
        min_gain=PAPER.min_gain,
        max_iter=PAPER.max_iter,
        min_iter=PAPER.min_iter,
        tol=PAPER.tol,
        rate_window=PAPER.rate_window,
        plateau_tol=PAPER.plateau_tol,
        abandon_margin=PAPER.abandon_margin,
        cost_every=PAPER.cost_every,
        init_scale=1e-4,
        precision="float64",
        log_every=0,
        random_state=None,
        repulsion="exact",
        n_interpolation_points=FFT.n_interpolation_points,
        nodes_per_unit=FFT.nodes_per_unit,
        min_grid_size=FFT.min_grid_size,
    ):
        self.n_components = n_components
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.momentum_epochs = momentum_epochs
        self.exaggeration = exaggeration
        self.exaggeration_epochs = exaggeration_epochs
        self.min_gain = min_gain
        self.max_iter = max_iter
        self.min_iter = min_iter
        self.tol = tol
        self.rate_window = rate_window
        self.plateau_tol = plateau_tol
        self.abandon_margin = abandon_margin
        self.cost_every = cost_every
        self.init_scale = init_scale
        self.precision = precision
        self.log_every = log_every
        self.random_state = random_state
        self.repulsion = repulsion
        self.n_interpolation_points = n_interpolation_points
        self.nodes_per_unit = nodes_per_unit
        self.min_grid_size = min_grid_size

    def _dims(self) -> tuple[int, int]:
        return int(self.n_components), 0


class SNE(_EuclideanEmbedding):
    __doc__ = "Symmetric SNE in R^d: w = exp(-||y_i - y_j||^2).\n" + _COMMON_DOC
    _kernel = "sne"


class TSNE(_EuclideanEmbedding):
    __doc__ = "t-SNE in R^d: w = 1 / (1 + ||y_i - y_j||^2).\n" + _COMMON_DOC
    _kernel = "tsne"


class SNEST(_NeighbourEmbedding):
    __doc__ = (
        "SNEST in the space-time R^{n_space, n_time}: w = exp(||t_i - t_j||^2) / "
        "(1 + ||s_i - s_j||^2).\n"
        + _COMMON_DOC
        + """
    learning_rate_time : gamma_t, the time learning rate (one global adaptive gain; the
        paper asks gamma_t / gamma_s <= 1/100; its driver used 1 with gamma_s = 500).
    init_scale_time : standard deviation of the initial time coordinates.

    embedding_ holds the space columns, then the time columns; ``space_`` and ``time_`` are
    views of them.
"""
    )
    _kernel = "snest"

    def __init__(
        self,
        n_space=2,
        n_time=1,
        *,
        learning_rate=PAPER.learning_rate,
        learning_rate_time=PAPER.learning_rate_time,
        momentum=PAPER.momentum,
        momentum_epochs=PAPER.momentum_epochs,
        exaggeration=PAPER.exaggeration,
        exaggeration_epochs=PAPER.exaggeration_epochs,
        min_gain=PAPER.min_gain,
        max_iter=PAPER.max_iter,
        min_iter=PAPER.min_iter,
        tol=PAPER.tol,
        rate_window=PAPER.rate_window,
        plateau_tol=PAPER.plateau_tol,
        abandon_margin=PAPER.abandon_margin,
        cost_every=PAPER.cost_every,
        init_scale=1e-4,
        init_scale_time=1e-5,
        precision="float64",
        log_every=0,
        random_state=None,
        repulsion="exact",
        n_interpolation_points=FFT.n_interpolation_points,
        nodes_per_unit=FFT.nodes_per_unit,
        min_grid_size=FFT.min_grid_size,
    ):
        self.n_space = n_space
        self.n_time = n_time
        self.learning_rate = learning_rate
        self.learning_rate_time = learning_rate_time
        self.momentum = momentum
        self.momentum_epochs = momentum_epochs
        self.exaggeration = exaggeration
        self.exaggeration_epochs = exaggeration_epochs
        self.min_gain = min_gain
        self.max_iter = max_iter
        self.min_iter = min_iter
        self.tol = tol
        self.rate_window = rate_window
        self.plateau_tol = plateau_tol
        self.abandon_margin = abandon_margin
        self.cost_every = cost_every
        self.init_scale = init_scale
        self.init_scale_time = init_scale_time
        self.precision = precision
        self.log_every = log_every
        self.random_state = random_state
        self.repulsion = repulsion
        self.n_interpolation_points = n_interpolation_points
        self.nodes_per_unit = nodes_per_unit
        self.min_grid_size = min_grid_size

    def _dims(self) -> tuple[int, int]:
        return int(self.n_space), int(self.n_time)

    @property
    def space_(self) -> np.ndarray:
        return self.embedding_[:, : self.n_space_]

    @property
    def time_(self) -> np.ndarray:
        return self.embedding_[:, self.n_space_ :]


METHODS = {"sne": SNE, "tsne": TSNE, "snest": SNEST}
