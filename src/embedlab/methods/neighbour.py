"""The neighbour-embedding estimators SNE, t-SNE and SNEST (scikit-learn's interface).

All three minimise KL(P || Q) with q_ij = w_ij / sum_{k != l} w_kl over ordered pairs and
differ only in the output kernel w (SNEST paper, eq. 7-10):

    SNE    (symmetric SNE)  R^d          w = exp(-||y_i - y_j||^2)
    t-SNE                   R^d          w = 1 / (1 + ||y_i - y_j||^2)
    SNEST                   R^{ds,dt}    w = exp(||t_i - t_j||^2) / (1 + ||s_i - s_j||^2)

The objective is :class:`~embedlab.methods.neighbour_kl.NeighbourKL` (the kernels, their
gradient and conventions in :mod:`embedlab.kernels.neighbour`; ``precision="float32"``: its
float32 pair arithmetic); the optimiser is :mod:`embedlab.optimize`.

The estimators follow scikit-learn's and openTSNE's conventions: ``fit(X)`` takes points
(n x D) and builds the perplexity P inside, or, with ``affinity="precomputed"``, P itself
(sparse or dense; what a valid P is, and how the perplexity P is built:
:mod:`embedlab.methods.neighbour_affinities`). Their defaults are the library's (openTSNE's
schedule, :data:`embedlab.optimize.LIBRARY`; SNEST keeps its paper's smaller exaggeration,
see :class:`SNEST`; :mod:`embedlab.methods.neighbour_protocol`); the papers' protocol is
:func:`~embedlab.methods.neighbour_protocol.paper_protocol`, which the workflow passes
explicitly. Restarts and learning-rate grids belong to the workflow.

The objective's and the input's names (:class:`NeighbourKL`, :func:`validate_affinities`,
:func:`perplexity_affinities`, ...) are importable from here too, as the library's users
import them; the package's own modules import them from their homes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from embedlab.kernels import neighbour_fft
from embedlab.kernels.fft_repulsion import FFTSettings
from embedlab.methods.conventions import keep_arguments, pairwise_of, points_of
from embedlab.methods.neighbour_affinities import (
    InvalidAffinityError,
    looks_like_affinities,
    perplexity_affinities,
    refuse_sparse_points,
    usable_perplexity,
    validate_affinities,
)
from embedlab.methods.neighbour_kl import OUTPUT_KERNELS, REFINE_WINDOW, NeighbourKL, OutputKernel
from embedlab.methods.neighbour_protocol import (
    FFT,
    INIT_SCALE,
    INIT_SCALE_TIME,
    PAPER,
    PERPLEXITY,
    SNEST_EXAGGERATION,
    SNEST_EXAGGERATION_EPOCHS,
    TIME_RATIO,
    initial_embedding,
    paper_protocol,
)
from embedlab.optimize import (
    BACKOFF,
    LIBRARY,
    GradientDescent,
    OptimizeResult,
    auto_learning_rate,
    minimize,
)

__all__ = [  # with the estimators, the names the library's users import from here
    "METHODS", "SNE", "SNEST", "TSNE", "InvalidAffinityError", "NeighbourKL", "OUTPUT_KERNELS",
    "OutputKernel", "REFINE_WINDOW", "initial_embedding", "looks_like_affinities",
    "paper_protocol", "perplexity_affinities", "refuse_sparse_points", "usable_perplexity",
    "validate_affinities",
]


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

    def _fft_settings(self) -> FFTSettings:
        return FFTSettings(
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
