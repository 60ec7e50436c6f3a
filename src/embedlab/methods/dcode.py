"""D-CODE: dynamic embedding of co-occurrence data with a Kalman filter (Sarkar et al., 2007).

The positions of authors and words (``Theta``, the state) are filtered over the time steps:
each step's count matrix is an observation of the CODE model (eq. 1-2,
:mod:`embedlab.methods.cooccurrence`), approximated by a Gaussian in the positions (eq. 6-14,
:mod:`embedlab.methods.dcode_observation`), which conditions the Gaussian belief of the Kalman
filter; between steps the belief follows a random walk (eq. 3-5,
:mod:`embedlab.methods.dcode_kalman`). This module holds the estimator, :class:`DCODE`, and the
paper's variants (:data:`VARIANTS`); the names of those modules stay importable from here.

Weight of one step (``likelihood``). The observation at step t is the whole count matrix
``C_t``; its multinomial log-likelihood is ``sum_ij C_t(i, j) log p(i, j) = N_t x (2)`` with
``N_t = sum C_t`` (eq. 2 is printed "up to a constant depending on the total number of
interactions"): ``likelihood="counts"`` (the default) multiplies ``eta`` and ``Lambda`` of (13)
by N_t. ``likelihood="per_token"`` reads (2) as the evidence of ONE token per step whatever N_t;
on NIPS (~1e4 tokens a year) its observation precision is ~1e-4 of the prior's, so the means
barely leave their random start and D-CODE's predictions come from the covariances alone. It is
kept as the second reading of Table 2.

Conditioning (``conditioning``). ``"mode"`` (default): the Gaussian approximation is expanded
at the posterior mode of the step, found by L-BFGS on the exact log posterior
``w log L(Theta) - 1/2 (Theta - mu)^T Lambda_prior (Theta - mu)`` (w = N_t or 1); that is the fixed
point of iterated linearisation (re-expanding (13) at the new mean until it stops moving), since
the projected observation keeps the exact gradient at its expansion point. With count-weighted
observations one expansion at the near-origin predicted mean overshoots by orders of magnitude
(the CODE likelihood has negative curvature there). ``"single"``: the paper's one expansion at
the predicted mean ``mu_{t|t-1}`` (section 3.2.1).

Variants (section 4.1): ``mode="full"`` (D-CODE) predicts with the posterior distributions:
``E[exp(-||phi_i - psi_j||^2)]`` in closed form under the Gaussian posterior of
``phi_i - psi_j`` (its covariance keeps the author-word correlations), ``Z`` treated as a
constant (it cancels in ``p(w | a)``); ``mode="mle"`` (D-CODE MLE) evaluates (1) at the
posterior means; both come from the same fit (``log_word_given_author(mode=...)``).
``static=True`` (Static D-CODE [MLE]) embeds only the last count matrix, conditioned like one
step of the dynamic filter. Prediction of the next step (``horizon=1``): the one-step predictive
distribution, the filtered one plus the transition noise, so every ``phi_i - psi_j`` gains
``2 transition_var I`` of covariance (the means do not move: MLE ranks are unchanged).
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import scipy.optimize
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from embedlab.kernels.cooccurrence import log_likelihood_and_gradient
from embedlab.methods.conventions import keep_arguments
from embedlab.methods.cooccurrence import (
    check_counts,
    empirical_distribution,
    log_expected_affinity,
    log_likelihood,
    log_likelihood_gradient,
    log_word_given_author,
    partition_function,
)
from embedlab.methods.dcode_kalman import (
    GaussianBelief,
    condition,
    difference_covariances,
    entity_blocks,
    spd_inverse,
)
from embedlab.methods.dcode_observation import (
    TaylorPieces,
    approximate_log_likelihood,
    laplacian_precision,
    log_partition_taylor,
    nearest_positive_definite,
    observation_canonical,
    partition_function_taylor,
    project_observation,
    taylor_pieces,
)

__all__ = [
    "CONDITIONINGS",
    "DCODE",
    "LIKELIHOODS",
    "MAX_STATE_DIM",
    "MODES",
    "SINGLE_BLAS_MAX_DIM",
    "VARIANTS",
    "GaussianBelief",
    "TaylorPieces",
    "approximate_log_likelihood",
    "check_counts",
    "condition",
    "difference_covariances",
    "empirical_distribution",
    "entity_blocks",
    "laplacian_precision",
    "log_expected_affinity",
    "log_likelihood",
    "log_likelihood_gradient",
    "log_partition_taylor",
    "log_word_given_author",
    "make_variant",
    "nearest_positive_definite",
    "observation_canonical",
    "partition_function",
    "partition_function_taylor",
    "project_observation",
    "spd_inverse",
    "taylor_pieces",
]

#: weightings of the observation log-likelihood of one step (see :class:`DCODE`)
LIKELIHOODS = ("counts", "per_token")
#: where the Gaussian observation model of a step is expanded
CONDITIONINGS = ("mode", "single")
#: prediction with the posterior distributions (D-CODE) or the posterior means (D-CODE MLE)
MODES = ("full", "mle")
#: largest state dimension k(A+W) handled (dense precision matrices of this size are stored)
MAX_STATE_DIM = 12_000
#: fits up to this state dimension run their dense linear algebra on one BLAS thread: more
#: threads barely help at this size and stall badly on a loaded machine
SINGLE_BLAS_MAX_DIM = 4_000


# --------------------------------------------------------------------------------------
# the estimator


class DCODE(BaseEstimator):
    """D-CODE and its variants: Kalman filtering of CODE embeddings over time.

    Parameters
    ----------
    n_components : embedding dimension k.
    transition_var : variance of the random-walk transition noise added per step (eq. 5).
    initial_var : prior variance of every coordinate before the first step.
    init_scale : standard deviation of the random initial means around the origin.
    eigenvalue_floor : negative (or tiny) observation-precision eigenvalues are raised to this.
    mode : default prediction of :meth:`log_word_given_author`: ``"full"`` (with the posterior
        distributions, D-CODE) or ``"mle"`` (posterior means, D-CODE MLE).
    static : if True embed only the last count matrix (Static D-CODE / Static D-CODE MLE).
    likelihood : ``"counts"`` (default): the observation log-likelihood of step t is
        ``N_t x (2)``, the multinomial log-likelihood of the counts; ``"per_token"``: eq. (2)
        as printed, one token's evidence per step (see the module docstring).
    conditioning : ``"mode"`` (default): expand the observation model at the posterior mode of
        the step (L-BFGS on the exact log posterior); ``"single"``: the paper's one expansion
        at the predicted mean.
    max_iter, tol : L-BFGS iterations per step and its tolerance on the largest gradient
        component of the negative log posterior, relative to the step's weight (N_t or 1).
    random_state : seed of the initial means (numpy Generator).

    Attributes (T = number of filtered steps; 1 when static)
    ----------
    means_ : (T, A+W, k) filtered posterior means (authors first, then words).
    covariances_ : (T, A+W, k, k) marginal posterior covariance of each entity.
    conditional_covariances_ : (T, A+W, k, k) covariance of each entity given all others at
        their means (inverse diagonal precision blocks; the paper's Fig. 3 ellipses).
    difference_covariances_ : (T, A, W, k, k) posterior covariance of ``phi_i - psi_j``.
    author_marginals_, word_marginals_ : (T, A), (T, W) empirical marginals of each step.
    n_raised_ : (T,) observation-precision eigenvalues raised by the PD projection per step.
    n_iter_ : (T,) L-BFGS iterations per step (1 for ``conditioning="single"``).
    mode_residual_ : (T,) largest coordinate move of one more linearisation at the final
        expansion point (~0 at a mode; the distance from the mode for ``"single"``).
    covariance_ : full posterior covariance of the last step; embedding_ : ``means_[-1]``.
    """

    def __init__(
        self,
        n_components: int = 2,
        transition_var: float = 1.0,
        initial_var: float = 100.0,
        init_scale: float = 0.1,
        eigenvalue_floor: float = 1e-6,
        mode: str = "full",
        static: bool = False,
        likelihood: str = "counts",
        conditioning: str = "mode",
        max_iter: int = 5000,
        tol: float = 1e-6,
        random_state=None,
    ):
        keep_arguments(self, locals())

    def _check_params(self, shape) -> None:
        _check_choice("mode", self.mode, MODES)
        _check_choice("likelihood", self.likelihood, LIKELIHOODS)
        _check_choice("conditioning", self.conditioning, CONDITIONINGS)
        for name in ("transition_var", "initial_var", "eigenvalue_floor", "tol"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {self.max_iter!r}")
        state_dim = self.n_components * (shape[0] + shape[1])
        if state_dim > MAX_STATE_DIM:
            raise ValueError(
                f"state dimension k(A+W) = {state_dim} exceeds {MAX_STATE_DIM}: D-CODE keeps "
                "dense precision matrices; embed a subset of authors and words"
            )

    def _linearised_posterior(self, prior: GaussianBelief, p_joint, expansion, weight):
        """Condition ``prior`` on the Gaussian observation model expanded at ``expansion``."""
        n = expansion.size // self.n_components
        eta, lam = observation_canonical(p_joint, expansion.reshape(n, self.n_components))
        eta, lam, raised = project_observation(
            weight * eta, weight * lam, expansion, self.eigenvalue_floor
        )
        return condition(prior, eta, lam), raised

    def _posterior_mode(self, prior: GaussianBelief, p_joint, weight) -> tuple[np.ndarray, int]:
        """Mode of ``weight x (2) + log N(Theta; mu, Lambda^-1)`` by L-BFGS from ``mu``.

        Stops when the largest gradient component is below ``tol x weight`` (the log posterior
        scales with the weight) or after ``max_iter`` iterations; returns (mode, iterations).
        """
        k = self.n_components
        shape = (prior.mean.size // k, k)

        def negative_log_posterior(x):
            d = x - prior.mean
            Pd = prior.precision @ d
            value, grad = log_likelihood_and_gradient(x.reshape(shape), p_joint)
            return 0.5 * d @ Pd - weight * value, Pd - weight * grad.ravel()

        result = scipy.optimize.minimize(
            negative_log_posterior,
            prior.mean,
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": int(self.max_iter),
                "gtol": self.tol * weight,
                "ftol": 1e-14,
                "maxcor": 20,
            },
        )
        if not np.isfinite(result.x).all():
            raise FloatingPointError("D-CODE: the posterior mode search left the finite numbers")
        return result.x, int(result.nit)

    def _condition_step(self, prior: GaussianBelief, p_joint, weight):
        """One conditioning step; returns (posterior, eigenvalues raised, iterations, residual).

        The posterior is the prior conditioned on the observation model expanded at the
        posterior mode (``"mode"``) or at the predicted mean (``"single"``); ``residual`` is how
        far one more linearisation would move the mean (max over coordinates).
        """
        if self.conditioning == "single":
            expansion, n_iter = prior.mean, 1
        else:
            expansion, n_iter = self._posterior_mode(prior, p_joint, weight)
        post, raised = self._linearised_posterior(prior, p_joint, expansion, weight)
        residual = float(np.abs(post.mean - expansion).max())
        if not np.isfinite(residual) or residual > 1e6:
            raise FloatingPointError(
                f"D-CODE conditioning diverged (mean step {residual:.3g}); lower initial_var / "
                "transition_var or raise eigenvalue_floor"
            )
        if self.conditioning == "mode":  # the mode is the fixed point: keep it as the mean
            post = GaussianBelief(expansion, post.covariance, post.precision)
        return post, raised, n_iter, residual

    def fit(self, counts, y=None) -> DCODE:
        """Filter the sequence ``counts`` (list of T (A x W) matrices, dense or sparse).

        A step whose matrix is all zero carries no evidence (the prediction stands); the
        static variants need a non-empty last matrix.
        """
        counts = check_counts(counts)
        if self.static:
            counts = counts[-1:]
            if counts[0].sum() == 0:
                raise ValueError("static D-CODE: the last count matrix is all zero")
        A, W = counts[0].shape
        self._check_params((A, W))
        single_blas = self.n_components * (A + W) <= SINGLE_BLAS_MAX_DIM
        with threadpool_limits(limits=1, user_api="blas") if single_blas else nullcontext():
            self._filter(counts)
        return self

    def _filter(self, counts: list[np.ndarray]) -> None:
        A, W = counts[0].shape
        k = self.n_components
        rng = np.random.default_rng(self.random_state)
        init = rng.normal(scale=self.init_scale, size=(A + W) * k)
        belief = GaussianBelief.isotropic(init, self.initial_var)

        T = len(counts)
        self.means_ = np.empty((T, A + W, k))
        self.covariances_ = np.empty((T, A + W, k, k))
        self.conditional_covariances_ = np.empty((T, A + W, k, k))
        self.difference_covariances_ = np.empty((T, A, W, k, k))
        self.author_marginals_ = np.zeros((T, A))
        self.word_marginals_ = np.zeros((T, W))
        self.n_raised_ = np.zeros(T, dtype=np.int64)
        self.n_iter_ = np.zeros(T, dtype=np.int64)
        self.mode_residual_ = np.zeros(T)
        for t, C in enumerate(counts):
            if t > 0:
                belief = belief.predict(self.transition_var)
            if C.sum() > 0:  # an empty step carries no evidence: the prediction stands
                p_joint, p_a, p_w = empirical_distribution(C)
                self.author_marginals_[t], self.word_marginals_[t] = p_a, p_w
                weight = C.sum() if self.likelihood == "counts" else 1.0
                belief, self.n_raised_[t], self.n_iter_[t], self.mode_residual_[t] = (
                    self._condition_step(belief, p_joint, weight)
                )
            cov = belief.covariance
            self.means_[t] = belief.mean.reshape(A + W, k)
            self.covariances_[t] = entity_blocks(cov, k)
            self.conditional_covariances_[t] = np.linalg.inv(entity_blocks(belief.precision, k))
            self.difference_covariances_[t] = difference_covariances(cov, A, k)
        self.covariance_ = cov
        self.n_authors_, self.n_words_ = A, W
        self.embedding_ = self.means_[-1]

    def fit_transform(self, counts, y=None) -> np.ndarray:
        return self.fit(counts).embedding_

    def log_word_given_author(
        self, t: int = -1, p_words: np.ndarray | None = None, mode=None, horizon: int = 0
    ):
        """``log p(w | a)`` (A, W) for Naive Bayes prediction from filtered step ``t``.

        ``mode`` (default ``self.mode``): ``"full"``, expected model probabilities under the
        posterior; ``"mle"``, eq. (1) at the posterior means. ``horizon``: steps ahead of ``t``
        (the predictive distribution adds ``2 horizon transition_var I`` to the covariance of
        every ``phi_i - psi_j``; a static model has no transition and needs ``horizon=0``).
        ``p_words`` defaults to the empirical word marginal of step t (pass it explicitly for a
        step without counts).
        """
        check_is_fitted(self, "means_")
        mode = self.mode if mode is None else mode
        _check_choice("mode", mode, MODES)
        if int(horizon) < 0 or (self.static and horizon):
            raise ValueError(f"horizon must be >= 0 (0 for a static model), got {horizon!r}")
        A, k = self.n_authors_, self.n_components
        pos = self.means_[t]
        cov = None
        if mode == "full":
            cov = self.difference_covariances_[t] + 2.0 * horizon * self.transition_var * np.eye(k)
        p_words = self.word_marginals_[t] if p_words is None else p_words
        return log_word_given_author(pos[:A], pos[A:], p_words, cov)


def _check_choice(name: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


#: the paper's variants (section 4.1); a dynamic and a static fit serve two variants each
VARIANTS = {
    "dcode": {"mode": "full", "static": False},
    "dcode_mle": {"mode": "mle", "static": False},
    "static_dcode": {"mode": "full", "static": True},
    "static_dcode_mle": {"mode": "mle", "static": True},
}


def make_variant(name: str, **params) -> DCODE:
    """The paper's variants by name (``VARIANTS``); ``params`` override the defaults."""
    if name not in VARIANTS:
        raise ValueError(f"unknown D-CODE variant {name!r}; expected one of {sorted(VARIANTS)}")
    return DCODE(**{**VARIANTS[name], **params})
