"""Neighbour embeddings SNE, t-SNE and SNEST: one objective, three output kernels.

All three minimise KL(P || Q) with q_ij = w_ij / sum_{k != l} w_kl over ordered pairs and
differ only in the output kernel w (SNEST paper, eq. 7-10):

    SNE    (symmetric SNE)  R^d          w = exp(-||y_i - y_j||^2)
    t-SNE                   R^d          w = 1 / (1 + ||y_i - y_j||^2)
    SNEST                   R^{ds,dt}    w = exp(||t_i - t_j||^2) / (1 + ||s_i - s_j||^2)

The kernel, its gradient and their conventions (the factor 4, the log-sum-exp shift) are in
:mod:`embedlab.kernels.neighbour` (``precision="float32"``: its float32 pair arithmetic, see
:class:`NeighbourKL`); the optimiser is :mod:`embedlab.optimize`.

The estimators follow scikit-learn's and openTSNE's conventions: ``fit(X)`` takes points
(n x D) and builds the perplexity P inside (:func:`perplexity_affinities`), or, with
``affinity="precomputed"``, P itself (sparse or dense). Their defaults are the library's
(openTSNE's schedule, :data:`embedlab.optimize.LIBRARY`; SNEST keeps its paper's smaller
exaggeration, see :class:`SNEST`); the papers' protocol is :func:`paper_protocol`, which the
workflow passes explicitly. Restarts and learning-rate grids belong to the workflow.

Input P: square, finite, non-negative, symmetric (|P - P^T| <= 1e-9 max P), zero diagonal,
no empty row, summing to 1 within 1e-6 (then rescaled to sum exactly 1). P is NOT normalised
silently beyond that tolerance: a P that sums to 2 (e.g. counted twice) is a bug upstream, so
it raises :class:`InvalidAffinityError` naming the field and value.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from embedlab.kernels import neighbour as kernel_mod
from embedlab.kernels import neighbour_fft
from embedlab.methods.conventions import keep_arguments, pairwise_of, points_of
from embedlab.optimize import (
    BACKOFF,
    LIBRARY,
    DivergenceError,
    GradientDescent,
    OptimizeResult,
    auto_learning_rate,
    minimize,
)

#: the SNEST paper's optimiser settings (:func:`paper_protocol`); the estimators' defaults are
#: the library's, :data:`embedlab.optimize.LIBRARY`
PAPER = GradientDescent()
#: sd of the initial space and time coordinates (the paper's driver; both protocols)
INIT_SCALE = 1e-4
INIT_SCALE_TIME = 1e-5
#: the library's perplexity (openTSNE's and scikit-learn's)
PERPLEXITY = 30.0
#: SNEST's library time rate: gamma_t = TIME_RATIO gamma_s (the paper asks <= 1/100; with the
#: exaggeration below, 1e-2 blew the time coordinates up on digits, 3e-3 and 1e-3 converged on
#: digits and iris, 1e-3 also on 5,000 MNIST digits)
TIME_RATIO = 1e-3
#: SNEST's library exaggeration: its paper's, 4 for the first 100 epochs (see :class:`SNEST`)
SNEST_EXAGGERATION = 4.0
SNEST_EXAGGERATION_EPOCHS = 100
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
    itself is never modified: normalising a caller's P in place would divide it again at the
    next fit on the same P (a sum of 1 - 1.1e-16 moves some entries by an ulp), so a run's
    result would depend on the runs fitted before it."""
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
            f"{name}: {int(bad.sum())} NaN/inf values (first in row {row})"
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


def paper_protocol(time: bool = False) -> dict:
    """The SNEST paper's optimiser settings as estimator keywords (from
    :class:`embedlab.optimize.GradientDescent`, the home of the paper's protocol).

    The workflow passes these explicitly (with its schema's learning rates, ``max_iter``,
    precision and stopping tests on top); the estimators' own defaults are the library's
    (:data:`embedlab.optimize.LIBRARY`). ``time``: include SNEST's time learning rate and the
    sd of its initial time coordinates."""
    kw = {
        "learning_rate": PAPER.learning_rate,
        "momentum": tuple(PAPER.momentum),
        "momentum_epochs": tuple(PAPER.momentum_epochs),
        "exaggeration": PAPER.exaggeration,
        "exaggeration_epochs": PAPER.exaggeration_epochs,
        "min_gain": PAPER.min_gain,
        "max_iter": PAPER.max_iter,
        "min_iter": PAPER.min_iter,
        "tol": PAPER.tol,
        "init_scale": INIT_SCALE,
        "precision": "float64",
        "backoff": 0,  # the protocol searches a grid of rates: a divergence is a failed run
    }
    if time:
        kw["learning_rate_time"] = PAPER.learning_rate_time
        kw["init_scale_time"] = INIT_SCALE_TIME
    return kw


def looks_like_affinities(X: np.ndarray) -> bool:
    """True when the dense array ``X`` is square, non-negative, symmetric, with a zero
    diagonal and summing to 1 within :data:`SUM_TOLERANCE`: a joint distribution over pairs
    (what ``affinity="precomputed"`` takes) rather than points x features."""
    n = X.shape[0]
    return (
        n >= 2
        and X.shape == (n, n)
        and bool((X >= 0).all())
        and not X.diagonal().any()
        and abs(float(X.sum()) - 1.0) <= SUM_TOLERANCE
        and bool(np.allclose(X, X.T, rtol=0.0, atol=SYMMETRY_TOLERANCE * float(X.max())))
    )


def refuse_sparse_points(X) -> None:
    """Raise TypeError for a sparse ``X`` where points x features are expected: a sparse
    matrix given to ``affinity="perplexity"`` is most likely an affinity matrix P."""
    if sp.issparse(X):
        raise TypeError(
            "X is a sparse matrix: with affinity='perplexity' X holds points x features "
            "(dense); pass affinity='precomputed' if X is an affinity matrix P"
        )


def usable_perplexity(perplexity: float, n: int) -> float:
    """The perplexity a P over ``n`` points is built at: ``perplexity``, or (n - 1) / 3 with a
    warning where it asks for more neighbours (3 per unit) than the other n - 1 points, as
    openTSNE lowers it; an error below 5 points, where not even a perplexity above 1 fits."""
    from embedlab.knn_affinities import NEIGHBOURS_PER_PERPLEXITY, neighbours_for

    perplexity = float(perplexity)
    highest = (n - 1) / NEIGHBOURS_PER_PERPLEXITY
    if not perplexity > 1.0:
        raise ValueError(f"perplexity must be > 1, got {perplexity!r}")
    if perplexity > highest:
        if highest <= 1.0:
            raise ValueError(f"{n} points are too few for a perplexity P (need n >= 5)")
        warnings.warn(
            f"perplexity {perplexity:g} needs {neighbours_for(perplexity)} neighbours of "
            f"{n - 1}; using perplexity {highest:g}",
            stacklevel=4,
        )
        perplexity = highest
    return perplexity


def perplexity_affinities(
    X, perplexity: float, neighbors: str = "auto", seed: int = 0
) -> tuple[sp.csr_matrix, float]:
    """(P, the perplexity used): the sparse perplexity P of the points ``X`` (n x D) that the
    estimators build with ``affinity="perplexity"``.

    p_j|i is calibrated to the perplexity over the k = ceil(3 perplexity) nearest neighbours
    of x_i in the input space (no PCA), P = (P_cond + P_cond^T) / (2 n)
    (:func:`embedlab.knn_affinities.knn_affinities`). ``neighbors``: "auto" (exact below
    :data:`embedlab.knn_affinities.EXACT_KNN_BELOW` points, else pynndescent's NN-descent, as
    openTSNE switches at scale), "exact" or "approx". A perplexity above (n - 1) / 3 (more
    neighbours than other points) is lowered to (n - 1) / 3 with a warning, as openTSNE does.
    """
    from embedlab.checks import check_points
    from embedlab.knn_affinities import EXACT_KNN_BELOW, knn_affinities, neighbours_for

    refuse_sparse_points(X)
    X = check_points(X)
    if looks_like_affinities(X):
        raise ValueError(
            "X is square, symmetric, non-negative, with a zero diagonal and sums to 1: an "
            "affinity matrix, not points x features; pass affinity='precomputed'"
        )
    exact_below = {"auto": EXACT_KNN_BELOW, "exact": X.shape[0] + 1, "approx": 0}
    if neighbors not in exact_below:
        raise ValueError(f"neighbors={neighbors!r}; expected one of {list(exact_below)}")
    n = X.shape[0]
    perplexity = usable_perplexity(perplexity, n)
    k = min(neighbours_for(perplexity), n - 1)
    aff = knn_affinities(
        X, perplexity, pca_dims=None, k=k, exact_below=exact_below[neighbors], seed=seed
    )
    return aff.P, perplexity


def _seed(random_state) -> int:
    """An int seed for the neighbour search from the estimator's ``random_state``."""
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    return 0


class _NeighbourEmbedding(BaseEstimator):
    """Shared fit logic; subclasses set ``_kernel`` and their dimensions."""

    _kernel = "tsne"

    def _dims(self) -> tuple[int, int]:
        raise NotImplementedError

    def _learning_rates(self, n: int) -> tuple[float, float]:
        """(gamma_s, gamma_t) for n points: "auto" = :func:`auto_learning_rate` of n and the
        exaggeration, and gamma_t = TIME_RATIO gamma_s."""
        rate = self.learning_rate
        if isinstance(rate, str):
            if rate != "auto":
                raise ValueError(f"learning_rate={rate!r}; expected 'auto' or a number > 0")
            rate = auto_learning_rate(n, self.exaggeration)
        rate_time = getattr(self, "learning_rate_time", PAPER.learning_rate_time)
        if isinstance(rate_time, str):
            if rate_time != "auto":
                raise ValueError(
                    f"learning_rate_time={rate_time!r}; expected 'auto' or a number > 0"
                )
            rate_time = TIME_RATIO * rate
        return rate, rate_time

    def _settings(self, n: int | None = None) -> GradientDescent:
        """The optimiser's settings for n points (n: only read by an "auto" learning rate)."""
        if n is None and "auto" in (self.learning_rate, getattr(self, "learning_rate_time", 0)):
            raise ValueError("an 'auto' learning rate needs the number of points")
        rate, rate_time = self._learning_rates(n if n is not None else 1)
        return GradientDescent.read(
            self,
            learning_rate=rate,
            learning_rate_time=rate_time,
            min_iter=self.max_iter if self.min_iter is None else self.min_iter,
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

    def _precision(self) -> str:
        """The kernel's working precision, "auto" resolved (see the parameter)."""
        if self.precision == "auto":
            return "float64" if self.repulsion == "fft" else "float32"
        return self.precision

    def _affinities(self, X) -> tuple[sp.csr_matrix, float | None]:
        """(valid P, perplexity used or None) from ``fit``'s input, read through
        scikit-learn's ``validate_data`` (:mod:`embedlab.methods.conventions`)."""
        if self.affinity == "precomputed":
            return validate_affinities(pairwise_of(self, X)), None
        if self.affinity != "perplexity":
            raise ValueError(
                f"affinity={self.affinity!r}; expected 'perplexity' (X: points x features) "
                "or 'precomputed' (X: the affinity matrix P)"
            )
        refuse_sparse_points(X)  # before validate_data, whose message does not say why
        X = points_of(self, X)
        P, perplexity = perplexity_affinities(
            X, self.perplexity, self.neighbors, _seed(self.random_state)
        )
        return validate_affinities(P), perplexity

    def fit(self, X, y=None, reference_cost=None):
        """Embed the points of ``X``, or the items of the affinity matrix ``X``.

        Parameters
        ----------
        X : array of shape (n, D), or (n, n) with ``affinity="precomputed"``
            The points (dense), or the joint affinities P over pairs (dense or scipy sparse;
            see :func:`validate_affinities` for what a valid P is).
        y : ignored
        reference_cost : float, optional
            The KL of the best finished run of the same problem, against which a losing run
            is abandoned (``abandon_margin``).

        Returns
        -------
        self
        """
        n_space, n_time = self._dims()
        if n_space < 1 or n_time < 0:
            raise ValueError(f"{type(self).__name__}: need >= 1 space and >= 0 time dimensions")
        if self.repulsion == "fft":
            neighbour_fft.check_supported(OUTPUT_KERNELS[self._kernel].kernel_id, n_space, n_time)
        Pv, perplexity = self._affinities(X)
        n = Pv.shape[0]
        settings = self._settings(n)
        objective = NeighbourKL(
            Pv,
            self._kernel,
            n_space,
            precision=self._precision(),
            repulsion=self.repulsion,
            fft=self._fft_settings(),
        )
        Y0 = self._initial(n, n_space, n_time)
        result: OptimizeResult = minimize(
            objective, Y0, n_space, settings, reference_cost=reference_cost
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
        self.affinities_ = Pv
        self.perplexity_ = perplexity
        self.backoffs_ = result.backoffs
        self.learning_rate_ = result.learning_rate
        if hasattr(self, "learning_rate_time"):
            self.learning_rate_time_ = result.learning_rate_time
        return self

    def fit_transform(self, X, y=None) -> np.ndarray:
        """:meth:`fit`, then return ``embedding_`` (n x dimensions)."""
        return self.fit(X).embedding_


_INPUT_DOC = """
    affinity : {"perplexity", "precomputed"}, default "perplexity"
        "perplexity": ``fit`` takes points X (n x D) and builds the perplexity P over each
        point's k = ceil(3 perplexity) nearest neighbours (:func:`perplexity_affinities`:
        exact neighbours below 10,000 points, pynndescent above); "precomputed": ``fit``
        takes P itself (n x n, dense or sparse).
    perplexity : float, default 30
        Target perplexity of the input affinities (lowered to (n - 1) / 3 for few points).
    neighbors : {"auto", "exact", "approx"}, default "auto"
        Nearest-neighbour search of the perplexity P."""

_OPTIMISER_DOC = """
    learning_rate : float or "auto", default "auto"
        gamma_s, the space learning rate; "auto": max(n / exaggeration, 50) / 4
        (:func:`embedlab.optimize.auto_learning_rate`, openTSNE's rate in our gradient's
        units).
    momentum : tuple of float, default (0.5, 0.8)
        Momentum values, one more than ``momentum_epochs``.
    momentum_epochs : tuple of int, default (250,)
        Epochs where the momentum switches to the next value.
    exaggeration : float, default {exaggeration:g}
        Factor of the attraction (P x exaggeration) during the first epochs.
    exaggeration_epochs : int, default {exaggeration_epochs}
        Epochs run with the exaggerated attraction.
    min_gain : float, default 0.01
        Lower bound of the adaptive (delta-bar-delta) gains.
    max_iter : int, default 750
        Most epochs.
    min_iter : int or None, default None
        Epochs before the tolerance test may stop the run; None: ``max_iter`` (the schedule
        runs to its end, as openTSNE's).
    tol : float, default 1e-9
        Stop once the spread of the last 5 costs is <= tol |E_last - E_first|.
    rate_window, plateau_tol, abandon_margin : int, float, float, default 0, 0, inf
        The plateau and abandonment tests of :mod:`embedlab.optimize` (off by default).
    cost_every : int, default 1
        Epochs between KL evaluations (> 1 only for a fixed number of epochs,
        min_iter = max_iter: the FFT path then skips the KL's logs in between, the run is
        the same; ``cost_trace_`` holds NaN there).
    backoff : int, default 10
        Restarts of a diverging run (a non-finite cost, a blown-up coordinate, a final KL
        above the initial one) from the same start with both learning rates halved; 0: a
        divergence raises :class:`embedlab.optimize.DivergenceError` at once.
    init_scale : float, default 1e-4
        Standard deviation of the initial (normal) space coordinates."""

_KERNEL_DOC = """
    precision : {"auto", "float64", "float32"}, default "auto"
        Working precision of the kernel's dense pair arithmetic (:class:`NeighbourKL`);
        coordinates, sums, KL and gradient stay float64. "auto": float32 with
        ``repulsion="exact"`` (epochs 1.2x (t-SNE) to 1.4-1.9x (SNEST) faster at n = 1797,
        the KL equal to ~1e-9 relative; the objective turns to float64 once the KL stalls),
        float64 with ``repulsion="fft"`` (which computes in float64).
    log_every : int, default 0
        Epochs between progress log lines (0: none).
    random_state : int, numpy Generator or None, default None
        Seed of the initialisation (and of the approximate neighbour search).
    repulsion : {"exact", "fft"}, default "exact"
        "exact": the O(n^2) pair loop (the papers' tables); "fft": the repulsion by grid
        interpolation + FFT (:mod:`embedlab.kernels.neighbour_fft`; at most 3 output
        dimensions, space + time, and one time dimension), the attraction still exact.
    n_interpolation_points, nodes_per_unit, min_grid_size : int, float, int
        The FFT grid (nodes of a point's stencil per dimension; grid nodes per unit of
        extent; cells per dimension at least); only with ``repulsion="fft"``."""

_ATTRIBUTES_DOC = """
    Attributes
    ----------
    embedding_ : ndarray of shape (n, dimensions)
        The map{columns}.
    kl_divergence_ : float
        KL(P || Q) of ``embedding_``.
    affinities_ : scipy.sparse.csr_matrix
        The P that was embedded (summing to 1).
    perplexity_ : float or None
        The perplexity of ``affinities_`` (None with ``affinity="precomputed"``).
    learning_rate_ : float
        The space learning rate of the returned run ("auto" resolved, halved at each backoff).
    backoffs_ : int
        Restarts after a divergence (``backoff``).
    n_iter_ : int
        Epochs run.
    converged_ : bool
        Stopped by the tolerance or the plateau test.
    stop_ : str
        The test that ended the run: "tol", "plateau", "abandoned" or "max_iter".
    cost_trace_ : ndarray
        KL before each epoch's step.
    momentum_switches_ : list of int
        Epochs where the momentum changed.
    exaggeration_end_ : int or None
        First epoch without exaggeration.
    float64_from_ : int or None
        First call evaluated in float64: 0 in float64, None if a float32 fit never stalled
        (:class:`NeighbourKL`).
"""

_EXAMPLE_DOC = """
    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from embedlab import {cls}
    >>> Y = {cls}(random_state=0).fit_transform(load_digits().data)  # doctest: +SKIP
    >>> P = {cls}(random_state=0).fit(load_digits().data).affinities_  # doctest: +SKIP
    >>> Y = {cls}(affinity="precomputed", random_state=0).fit_transform(P)  # doctest: +SKIP
"""


def _estimator_doc(summary: str, cls: str, dims: str, extra: str, exaggeration: float,
                   exaggeration_epochs: int, columns: str = "") -> str:
    """A numpydoc docstring for one of the estimators."""
    optimiser = _OPTIMISER_DOC.format(
        exaggeration=exaggeration, exaggeration_epochs=exaggeration_epochs
    )
    return (
        summary
        + "\n\n    Parameters\n    ----------"
        + dims
        + _INPUT_DOC
        + optimiser
        + extra
        + _KERNEL_DOC
        + "\n"
        + _ATTRIBUTES_DOC.format(columns=columns)
        + _EXAMPLE_DOC.format(cls=cls)
    )


class _EuclideanEmbedding(_NeighbourEmbedding):
    """SNE and t-SNE: ``n_components`` space dimensions, no time."""

    def __init__(
        self,
        n_components=2,
        *,
        affinity="perplexity",
        perplexity=PERPLEXITY,
        neighbors="auto",
        learning_rate="auto",
        momentum=LIBRARY.momentum,
        momentum_epochs=LIBRARY.momentum_epochs,
        exaggeration=LIBRARY.exaggeration,
        exaggeration_epochs=LIBRARY.exaggeration_epochs,
        min_gain=LIBRARY.min_gain,
        max_iter=LIBRARY.max_iter,
        min_iter=None,
        tol=LIBRARY.tol,
        rate_window=LIBRARY.rate_window,
        plateau_tol=LIBRARY.plateau_tol,
        abandon_margin=LIBRARY.abandon_margin,
        cost_every=LIBRARY.cost_every,
        backoff=BACKOFF,
        init_scale=INIT_SCALE,
        precision="auto",
        log_every=0,
        random_state=None,
        repulsion="exact",
        n_interpolation_points=FFT.n_interpolation_points,
        nodes_per_unit=FFT.nodes_per_unit,
        min_grid_size=FFT.min_grid_size,
    ):
        keep_arguments(self, locals())

    def _dims(self) -> tuple[int, int]:
        return int(self.n_components), 0


_EUCLIDEAN_DIMS = """
    n_components : int, default 2
        Dimensions of the map."""


class SNE(_EuclideanEmbedding):
    __doc__ = _estimator_doc(
        "Symmetric SNE in R^d: w = exp(-||y_i - y_j||^2), minimising KL(P || Q).",
        "SNE", _EUCLIDEAN_DIMS, "", LIBRARY.exaggeration, LIBRARY.exaggeration_epochs,
    )
    _kernel = "sne"


class TSNE(_EuclideanEmbedding):
    __doc__ = _estimator_doc(
        "t-SNE in R^d: w = 1 / (1 + ||y_i - y_j||^2), minimising KL(P || Q).\n\n"
        "    The defaults are openTSNE's: perplexity 30, 750 epochs, the attraction x 12 for\n"
        "    the first 250, learning rate max(n / 12, 50) in openTSNE's units.",
        "TSNE", _EUCLIDEAN_DIMS, "", LIBRARY.exaggeration, LIBRARY.exaggeration_epochs,
    )
    _kernel = "tsne"


_SNEST_DIMS = """
    n_space : int, default 2
        Space dimensions (the map as drawn).
    n_time : int, default 1
        Time dimensions."""

_SNEST_EXTRA = """
    learning_rate_time : float or "auto", default "auto"
        gamma_t, the time learning rate (one global adaptive gain; the paper asks
        gamma_t / gamma_s <= 1/100); "auto": 1e-3 x the space rate (``TIME_RATIO``).
    init_scale_time : float, default 1e-5
        Standard deviation of the initial time coordinates."""


class SNEST(_NeighbourEmbedding):
    __doc__ = _estimator_doc(
        "SNEST in the space-time R^{n_space, n_time}: w = exp(||t_i - t_j||^2) /\n"
        "    (1 + ||s_i - s_j||^2), minimising KL(P || Q).\n\n"
        "    Defaults: t-SNE's schedule (750 epochs, momentum 0.5 then 0.8 from epoch 250) with\n"
        "    the SNEST paper's exaggeration, 4 for 100 epochs, and gamma_t = 1e-3 gamma_s.\n"
        "    Exaggeration x > 1 makes the time objective unbounded below: scaling the time\n"
        "    coordinates by c, the exaggerated cost grows as c^2 (max_kl dt_kl^2 -\n"
        "    x sum_ij p_ij dt_ij^2), which goes to -inf once the p-weighted mean squared time\n"
        "    distance exceeds 1/x of the largest (never at x = 1, since sum p = 1); the time\n"
        "    coordinates may then grow while the exaggeration lasts. At openTSNE's 12 for 250\n"
        "    epochs they blew up on iris at every time rate tried (1e-2 to 1e-3 gamma_s) and\n"
        "    on digits at 1e-2 and 3e-3 (at 1e-3 its map's 1-NN error was 0.07-0.09); at 4\n"
        "    for 100 they stayed below |t| ~ 2.",
        "SNEST", _SNEST_DIMS, _SNEST_EXTRA, SNEST_EXAGGERATION, SNEST_EXAGGERATION_EPOCHS,
        columns=": the space columns, then the time columns (``space_``, ``time_``: views)",
    )
    _kernel = "snest"

    def __init__(
        self,
        n_space=2,
        n_time=1,
        *,
        affinity="perplexity",
        perplexity=PERPLEXITY,
        neighbors="auto",
        learning_rate="auto",
        learning_rate_time="auto",
        momentum=LIBRARY.momentum,
        momentum_epochs=LIBRARY.momentum_epochs,
        exaggeration=SNEST_EXAGGERATION,
        exaggeration_epochs=SNEST_EXAGGERATION_EPOCHS,
        min_gain=LIBRARY.min_gain,
        max_iter=LIBRARY.max_iter,
        min_iter=None,
        tol=LIBRARY.tol,
        rate_window=LIBRARY.rate_window,
        plateau_tol=LIBRARY.plateau_tol,
        abandon_margin=LIBRARY.abandon_margin,
        cost_every=LIBRARY.cost_every,
        backoff=BACKOFF,
        init_scale=INIT_SCALE,
        init_scale_time=INIT_SCALE_TIME,
        precision="auto",
        log_every=0,
        random_state=None,
        repulsion="exact",
        n_interpolation_points=FFT.n_interpolation_points,
        nodes_per_unit=FFT.nodes_per_unit,
        min_grid_size=FFT.min_grid_size,
    ):
        keep_arguments(self, locals())

    def _dims(self) -> tuple[int, int]:
        return int(self.n_space), int(self.n_time)

    @property
    def space_(self) -> np.ndarray:
        """The space columns of ``embedding_`` (a view)."""
        return self.embedding_[:, : self.n_space_]

    @property
    def time_(self) -> np.ndarray:
        """The time columns of ``embedding_`` (a view)."""
        return self.embedding_[:, self.n_space_ :]


METHODS = {"sne": SNE, "tsne": TSNE, "snest": SNEST}
