"""Elastic Embedding (Carreira-Perpinan 2010) as smallvis runs it, plus the homotopy method.

    E(Y) = sum_ij v+_ij ||y_i - y_j||^2 + lambda sum_ij v-_ij exp(-||y_i - y_j||^2)

* v+ : perplexity-calibrated Gaussian affinities, symmetrised and normalised like symmetric
  SNE's P, (P + P^T) / (2n), summing to 1 (:func:`embedlab.perplexity.symmetric_affinities`).
  The notes say the spectral-direction paper skips the division by the sum, but smallvis
  normalises (ee.R: ``normalize = TRUE``) and its learning rates need it: with V+ summing to
  n, iris at lambda = 100 and learning rate 100 diverges (epoch 84, measured);
* v- : squared input distances, normalised like smallvis's to sum 1, r_ij^2 / sum_kl r_kl^2
  (``negative_weights="distance"``), or 1 (``"uniform"``, the "no negative weights" variant,
  where lambda ~ 1e-3 ... 1e-5 is the useful range). The normalisation makes the map
  independent of the input's units (pixels in [0, 1] or 0-255 give the same v-). smallvis's
  code (ee.R) normalises both V+ and V- and uses unsquared distances for V-; the notes and
  the EE paper use r^2, which we keep;
* initialisation: PCA scores scaled to standard deviation 1e-4 per column (smallvis "spca");
* optimiser: :func:`embedlab.optimize.minimize` (delta-bar-delta gains, momentum 0.5 then 0.8
  from epoch 250, no exaggeration: smallvis's defaults for EE).

The cost is :class:`ElasticCost`: the shared neighbour-embedding pair kernel
(:func:`embedlab.kernels.neighbour.pair_fields`) with the SNE output kernel and dense
repulsive weights; :func:`elastic_costs` builds it for both kinds of negative weights.

Homotopy (``homotopy="logspace"``): lambda takes ``homotopy_steps`` log-spaced values from
``homotopy_start`` to ``lam``; each stage runs up to ``stage_iter`` epochs from the previous
stage's final coordinates. ``homotopy="polytope"``: smallvis notes' approximation, lambda =
homotopy_start, then the powers of 10 above it up to ``lam`` (``lam`` last), the first stage
allowed ``first_stage_iter`` epochs.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from embedlab.kernels import neighbour as kernel_mod
from embedlab.kernels import neighbour_fft
from embedlab.kernels.fft_repulsion import FFTSettings
from embedlab.kernels.output_kernels import SNE
from embedlab.methods.conventions import keep_arguments, points_of
from embedlab.methods.neighbour_affinities import (
    InvalidAffinityError,
    usable_perplexity,
    validate_affinities,
)
from embedlab.optimize import BACKOFF, DivergenceError, GradientDescent, minimize
from embedlab.perplexity import squared_distances, symmetric_affinities

NEGATIVE_WEIGHTS = ("distance", "uniform")
HOMOTOPY = (None, "logspace", "polytope")


class ElasticCost:
    """The Elastic Embedding cost on the same pair kernel (SNE output kernel w = exp(-d^2)):

        E = sum_ij v+_ij d_ij^2 + lambda sum_{i != j} v-_ij w_ij,
        dE/dy_i = 4 sum_j (v+_ij - lambda v-_ij w_ij) (y_i - y_j),

    i.e. E = C_att + lambda M e^c and dE/dY = 4 (A - lambda R e^c) with the fields of
    :func:`embedlab.kernels.neighbour.pair_fields` (``V_plus`` as P, ``V_minus`` as the
    repulsive weights; None = uniform v- = 1). ``V_plus``: sparse, symmetric, non-negative,
    zero diagonal, no empty row, any total (checked by :func:`validate_affinities` after
    dividing by its sum). :meth:`with_lam` gives the same cost at another lambda (sharing
    v+ and v-; the homotopy's stages). The optimiser's exaggeration, if any, scales the
    attraction as for the KL. ``repulsion="fft"`` (uniform v- only, at most 3 dimensions)
    computes the repulsion by grid interpolation + FFT on the grid ``fft``
    (:mod:`embedlab.kernels.neighbour_fft`).
    """

    def __init__(
        self,
        V_plus,
        V_minus: np.ndarray | None,
        lam: float,
        n_space: int = 2,
        repulsion: str = "exact",
        fft: FFTSettings | None = None,
    ):
        V = sp.csr_matrix(V_plus, dtype=np.float64)
        total = float(V.sum()) if V.nnz else 0.0
        if not (np.isfinite(total) and total > 0):
            raise InvalidAffinityError(f"V+: total weight {total!r} must be finite and > 0")
        V = validate_affinities(V / total, name="V+") * total
        self.n = V.shape[0]
        if V_minus is not None:
            V_minus = np.ascontiguousarray(V_minus, dtype=np.float64)
            if V_minus.shape != (self.n, self.n):
                raise ValueError(f"V-: shape {V_minus.shape}, expected {(self.n, self.n)}")
            if not np.isfinite(V_minus).all() or (V_minus < 0).any():
                raise ValueError("V-: must be finite and non-negative")
            if not np.allclose(V_minus, V_minus.T, rtol=0, atol=1e-9 * max(V_minus.max(), 1)):
                raise ValueError("V-: must be symmetric (only its upper triangle is read)")
        self.V_minus = V_minus
        self.parts = kernel_mod.csr_parts(V)
        self.lam = float(lam)
        self.n_space = n_space
        self._set_repulsion(repulsion, fft)

    def __call__(
        self, Y: np.ndarray, exaggeration: float = 1.0, with_cost: bool = True
    ) -> tuple[float, np.ndarray]:
        """(E at Y, gradient with the attraction exaggerated); without ``with_cost`` E is NaN
        and, with repulsion="fft", its attractive part is not computed."""
        if Y.shape[0] != self.n:
            raise ValueError(f"embedding has {Y.shape[0]} points, V+ has {self.n}")
        if self.repulsion == "fft":
            f = self._renumbered.fields(SNE, Y, self.n_space, self.fft, with_cost)
        else:
            f = kernel_mod.pair_fields(SNE, Y, self.n_space, self.parts, self.V_minus)
        scale = self.lam * np.exp(f.shift)
        with np.errstate(invalid="ignore", over="ignore"):  # reported just below
            cost = (f.att_cost if with_cost else 0.0) + scale * f.mass
        if not np.isfinite(cost):
            raise DivergenceError(
                f"elastic embedding: cost {cost!r} is not finite (coordinates blown up, max "
                f"|y| = {np.abs(Y).max():.3g}); try a smaller learning rate"
            )
        grad = 4.0 * (exaggeration * f.att - scale * f.rep)
        return (float(cost) if with_cost else math.nan), grad

    def cost(self, Y: np.ndarray) -> float:
        """E(Y) at this cost's lambda."""
        return self(Y)[0]

    def with_lam(self, lam: float) -> ElasticCost:
        """The same v+ and v- (shared, not copied) at lambda ``lam``; ``self`` is unchanged."""
        other = copy.copy(self)
        other.lam = float(lam)
        return other

    def with_repulsion(
        self, repulsion: str, fft: FFTSettings | None = None
    ) -> ElasticCost:
        """The same v+ and v- with the repulsion computed as ``repulsion`` ("exact" or "fft")."""
        other = copy.copy(self)
        other._set_repulsion(repulsion, fft)
        return other

    def _set_repulsion(self, repulsion: str, fft: FFTSettings | None) -> None:
        neighbour_fft.check_repulsion(repulsion)
        if repulsion == "fft":
            neighbour_fft.check_supported(SNE, self.n_space, 0, self.V_minus)
        self.repulsion, self.fft = repulsion, fft
        # the FFT path's V+, renumbered here once: with_lam's copies (one per homotopy stage)
        # share it
        self._renumbered = (
            neighbour_fft.RenumberedP.of(self.parts) if repulsion == "fft" else None
        )


def elastic_costs(
    X: np.ndarray, perplexity: float, lam: float = 1.0, n_components: int = 2
) -> dict[str, ElasticCost]:
    """The EE costs of X for each kind of negative weights, sharing one v+:
    {"distance": v- = r^2 / sum r^2, "uniform": v- = 1} at lambda ``lam``."""
    D2 = squared_distances(np.asarray(X, dtype=np.float64))
    V_plus = symmetric_affinities(D2, perplexity)
    return {
        "distance": ElasticCost(V_plus, D2 / D2.sum(), lam, n_space=n_components),
        "uniform": ElasticCost(V_plus, None, lam, n_space=n_components),
    }


def logspace_lambdas(target: float, start: float = 1e-4, n_steps: int = 50) -> np.ndarray:
    """n_steps log-spaced lambdas from ``start`` to ``target`` (both included)."""
    if not 0 < start <= target or n_steps < 1:
        raise ValueError(f"need 0 < start {start} <= target {target} and n_steps {n_steps} >= 1")
    if n_steps == 1:
        return np.array([float(target)])
    lams = np.logspace(math.log10(start), math.log10(target), n_steps)
    lams[-1] = target
    return lams


def polytope_lambdas(target: float, start: float = 1e-4) -> np.ndarray:
    """``start``, then every power of 10 strictly between start and target, then target."""
    if not 0 < start <= target:
        raise ValueError(f"need 0 < start {start} <= target {target}")
    powers = 10.0 ** np.arange(math.floor(math.log10(start)) + 1, math.ceil(math.log10(target)))
    inner = [p for p in powers if start * (1 + 1e-12) < p < target * (1 - 1e-12)]
    lams = [float(start), *inner]
    if target > start:
        lams.append(float(target))
    return np.array(lams)


def scaled_pca(X: np.ndarray, n_components: int = 2, sd: float = 1e-4) -> np.ndarray:
    """PCA scores of X, each column rescaled to standard deviation ``sd``; the sign of each
    axis fixed so that its largest-magnitude loading is positive (deterministic)."""
    Xc = np.asarray(X, dtype=np.float64) - np.mean(X, axis=0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    scores = U[:, :n_components] * S[:n_components]
    signs = np.sign(Vt[np.arange(n_components), np.argmax(np.abs(Vt[:n_components]), axis=1)])
    scores *= np.where(signs == 0, 1.0, signs)
    spread = scores.std(axis=0)
    spread[spread == 0] = 1.0
    return scores / spread * sd


class ElasticEmbedding(BaseEstimator):
    """Elastic Embedding of vectors X (n x D); see the module docstring.

    E(Y) = sum_ij v+_ij ||y_i - y_j||^2 + lambda sum_ij v-_ij exp(-||y_i - y_j||^2), v+ the
    perplexity affinities of X, v- its normalised squared distances or 1. The defaults are
    smallvis's (the reference implementation the EE experiment reproduces).

    Parameters
    ----------
    lam : float, default 100
        The target lambda, weight of the repulsion.
    perplexity : float, default 40
        Perplexity of the Gaussian v+ (lowered to (n - 1) / 3 for few points, with a
        warning, as the neighbour embeddings lower theirs).
    negative_weights : {"distance", "uniform"}, default "distance"
        v- = r^2 / sum r^2 or v- = 1.
    n_components : int, default 2
        Dimensions of the map.
    learning_rate : float, default 100
        Learning rate of :func:`embedlab.optimize.minimize`.
    momentum : tuple of float, default (0.5, 0.8)
        Momentum values, one more than ``momentum_epochs``.
    momentum_epochs : tuple of int, default (250,)
        Epochs where the momentum switches.
    min_gain : float, default 0.01
        Lower bound of the adaptive gains.
    max_iter : int, default 1000
        Most epochs (per stage with a homotopy unless ``stage_iter`` is given).
    min_iter : int, default 250
        Epochs before the tolerance test may stop a stage.
    tol : float, default 1e-7
        Stop once the spread of the last 5 costs is <= tol |E_last - E_first|.
    cost_every : int, default 1
        Epochs between cost evaluations (> 1 needs min_iter >= max_iter).
    backoff : int, default 10
        Restarts of a diverging stage (a non-finite cost, a final cost above the stage's
        initial one) from the stage's start with the learning rate halved; 0: a divergence
        raises :class:`embedlab.optimize.DivergenceError` at once.
    homotopy : {None, "logspace", "polytope"}, default None
        Lambda schedule (module docstring).
    homotopy_start : float, default 1e-4
        First lambda of a homotopy.
    homotopy_steps : int, default 50
        Stages of the "logspace" homotopy.
    stage_iter : int or None, default None
        Epochs per homotopy stage (None: ``max_iter``).
    first_stage_iter : int or None, default None
        Epochs of the first stage (None: as the others).
    init : {"spca", "random"}, default "spca"
        Scaled PCA (sd 1e-4) or normal (sd 1e-4, from ``random_state``).
    log_every : int, default 0
        Epochs between progress lines (0: none).
    random_state : int or None, default None
        Seed of the "random" initialisation.
    repulsion : {"exact", "fft"}, default "exact"
        "fft" (uniform negative weights only): the repulsion by grid interpolation + FFT
        (:mod:`embedlab.kernels.neighbour_fft`, default grid).

    Attributes
    ----------
    embedding_ : ndarray of shape (n, n_components)
        The map.
    cost_ : float
        E at ``embedding_`` and the target lambda.
    n_iter_ : int
        Epochs, all stages.
    backoffs_ : ndarray
        Restarts after a divergence per stage (``backoff``).
    cost_trace_ : ndarray
        The cost per epoch, stages concatenated.
    lambdas_ : ndarray
        Lambda per stage.
    stage_n_iter_ : ndarray
        Epochs per stage.
    stage_starts_, stage_ends_ : list of ndarray
        The coordinates each stage started from and stopped at.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from embedlab import ElasticEmbedding
    >>> X = load_iris().data
    >>> Y = ElasticEmbedding(lam=100, perplexity=15).fit_transform(X)  # doctest: +SKIP
    """

    def __init__(
        self,
        lam=100.0,
        perplexity=40.0,
        negative_weights="distance",
        *,
        n_components=2,
        learning_rate=100.0,
        momentum=(0.5, 0.8),
        momentum_epochs=(250,),
        min_gain=0.01,
        max_iter=1000,
        min_iter=250,
        tol=1e-7,
        cost_every=1,
        backoff=BACKOFF,
        homotopy=None,
        homotopy_start=1e-4,
        homotopy_steps=50,
        stage_iter=None,
        first_stage_iter=None,
        init="spca",
        log_every=0,
        random_state=None,
        repulsion="exact",
    ):
        keep_arguments(self, locals())

    def lambdas(self) -> np.ndarray:
        """The lambda of each stage: [lam] without a homotopy, else the schedule's."""
        if self.homotopy not in HOMOTOPY:
            raise ValueError(f"homotopy={self.homotopy!r}; expected one of {HOMOTOPY}")
        if not self.lam > 0:
            raise ValueError(f"lam={self.lam!r} must be > 0")
        if self.homotopy is None:
            return np.array([float(self.lam)])
        if self.homotopy == "logspace":
            return logspace_lambdas(self.lam, self.homotopy_start, self.homotopy_steps)
        return polytope_lambdas(self.lam, self.homotopy_start)

    def _stage_settings(self, stage: int) -> GradientDescent:
        max_iter = self.max_iter if self.stage_iter is None else self.stage_iter
        if stage == 0 and self.first_stage_iter is not None:
            max_iter = self.first_stage_iter
        return GradientDescent.read(
            self,
            exaggeration=1.0,
            exaggeration_epochs=0,
            max_iter=int(max_iter),
            min_iter=min(int(self.min_iter), int(max_iter)),
        )

    def _initial(self, X: np.ndarray) -> np.ndarray:
        if self.init == "spca":
            return scaled_pca(X, self.n_components)
        if self.init == "random":
            rng = np.random.default_rng(self.random_state)
            return rng.normal(0.0, 1e-4, size=(X.shape[0], self.n_components))
        raise ValueError(f"init={self.init!r}; expected 'spca' or 'random'")

    def objective(self, X) -> ElasticCost:
        """The EE cost of X at the target lambda (v+, v- built from X)."""
        if self.negative_weights not in NEGATIVE_WEIGHTS:
            raise ValueError(
                f"negative_weights={self.negative_weights!r}; expected one of {NEGATIVE_WEIGHTS}"
            )
        perplexity = usable_perplexity(self.perplexity, len(X))
        cost = elastic_costs(X, perplexity, self.lam, self.n_components)[self.negative_weights]
        return cost.with_repulsion(self.repulsion)

    def fit(self, X, y=None, objective: ElasticCost | None = None):
        """Embed the rows of X. ``objective``: a prebuilt :meth:`objective` of the same X,
        perplexity and negative weights, to share v+ / v- between runs (its lambda is not
        used: each stage runs at its own, the target's for the final cost; ``objective``
        itself is not changed)."""
        X = points_of(self, X)
        lambdas = self.lambdas()
        if objective is None:
            objective = self.objective(X)
        elif objective.n != X.shape[0]:
            raise ValueError(f"objective has {objective.n} points, X has {X.shape[0]}")
        Y = self._initial(X)
        starts, ends, n_iters, traces, backoffs = [], [], [], [], []
        for stage, lam in enumerate(lambdas):
            starts.append(Y.copy())
            stage_cost = objective.with_lam(lam)
            result = minimize(stage_cost, Y, self.n_components, self._stage_settings(stage))
            Y = result.Y
            ends.append(Y.copy())
            n_iters.append(result.n_iter)
            traces.append(result.cost_trace)
            backoffs.append(result.backoffs)
        self.embedding_ = Y
        self.cost_ = objective.with_lam(self.lam).cost(Y)
        self.n_iter_ = int(sum(n_iters))
        self.cost_trace_ = np.concatenate(traces)
        self.lambdas_ = lambdas
        self.stage_n_iter_ = np.array(n_iters)
        self.backoffs_ = np.array(backoffs)
        self.stage_starts_ = starts
        self.stage_ends_ = ends
        return self

    def fit_transform(self, X, y=None) -> np.ndarray:
        """:meth:`fit`, then return ``embedding_``."""
        return self.fit(X).embedding_
