"""D-CODE: dynamic embedding of co-occurrence data with a Kalman filter (Sarkar et al., 2007).

CODE observation model (paper eq. 1-2), for one count matrix C with empirical joint
``p_ij = C_ij / sum C`` and marginals ``p_i``, ``p_j``::

    p(a_i, w_j | phi, psi) = p_i p_j exp(-||phi_i - psi_j||^2) / Z,
    Z = sum_ij p_i p_j exp(-||phi_i - psi_j||^2)
    L(Theta) = -sum_ij p_ij ||phi_i - psi_j||^2 - log Z                     (2)

``Theta`` stacks the author coordinates ``phi_i`` (rows 0..A-1) and the word coordinates
``psi_j`` (rows A..A+W-1); flattened it is the state vector of length k(A+W), entity-major.

Gaussian approximation (section 3.2.1 and Appendix): ``log Z ~ lambda Z - 1 - log lambda`` with
``lambda = 1/z`` (6), and ``Z`` replaced by its second-order Taylor expansion around the
expansion point ``(xi, zeta)`` (7-9, 11-12). The approximate log-likelihood is then quadratic,
i.e. a Gaussian in canonical form with (13)::

    Lambda_approx = 2 Lambda_tilde + lambda Lambda_bar
    eta_approx    = -lambda (eta_bar - Lambda_bar Theta_0)

``Lambda_tilde`` (10, 14) is the block Laplacian of the joint ``p_ij``: ``Theta^T Lambda_tilde
Theta = sum p_ij ||phi_i - psi_j||^2``, i.e. blocks ``p_i I``, ``p_j I`` and ``-p_ij I`` (the
extracted eq. 10 prints ``p_j`` and ``-2 p_j``; the derivation (14) fixes them). ``eta_bar`` is the
gradient and ``Lambda_bar`` the Hessian of ``Z`` at the expansion point. Eq. (11) uses the
gradient alone, which is the expansion around 0; expanding around ``Theta_0`` (as the text says)
adds ``lambda Lambda_bar Theta_0``, and with it the approximation has the exact gradient at
``Theta_0``. The expansion point is the predicted mean ``mu_{t|t-1}`` (section 3.2.1).

Kalman filter (3-5): the observation precision is projected to the nearest positive-definite
matrix (negative eigenvalues raised to a small positive floor; Appendix) so the observation
model is a proper Gaussian -- ``eta`` is shifted so the gradient at ``Theta_0`` is kept --,
conditioning adds canonical parameters, and prediction adds ``transition_var * I`` to the
covariance. Filtering only (the paper filters up to T-1 and predicts T; no smoothing).

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
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse as sp
import scipy.special
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from embedlab.kernels.cooccurrence import log_likelihood_and_gradient
from embedlab.methods.conventions import keep_arguments

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
# input


def check_counts(counts, name: str = "counts") -> list[np.ndarray]:
    """Validate a sequence of (authors x words) count matrices; return dense float64 copies."""
    if sp.issparse(counts) or (isinstance(counts, np.ndarray) and counts.ndim == 2):
        counts = [counts]
    counts = list(counts)
    if not counts:
        raise ValueError(f"{name}: no time steps")
    out = []
    for t, c in enumerate(counts):
        c = c.toarray() if sp.issparse(c) else np.asarray(c)
        c = c.astype(np.float64)
        if c.ndim != 2 or 0 in c.shape:
            raise ValueError(f"{name}[{t}]: expected a non-empty 2-D matrix, got shape {c.shape}")
        if out and c.shape != out[0].shape:
            raise ValueError(f"{name}[{t}]: shape {c.shape} differs from {name}[0] {out[0].shape}")
        if not np.isfinite(c).all():
            bad = np.argwhere(~np.isfinite(c))[0].tolist()
            raise ValueError(f"{name}[{t}]: non-finite count at (author, word) = {bad}")
        if (c < 0).any():
            bad = np.argwhere(c < 0)[0].tolist()
            raise ValueError(f"{name}[{t}]: negative count at (author, word) = {bad}")
        out.append(c)
    return out


def empirical_distribution(C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint ``p_ij = C_ij / sum C`` and its marginals ``(p_joint, p_authors, p_words)``."""
    total = C.sum()
    if total <= 0:
        raise ValueError("count matrix is all zero: no empirical distribution")
    p = C / total
    return p, p.sum(axis=1), p.sum(axis=0)


# --------------------------------------------------------------------------------------
# the CODE model and the pieces of its Taylor approximation


def _pair_terms(authors: np.ndarray, words: np.ndarray):
    """Differences ``delta_ij = phi_i - psi_j`` (A, W, k) and ``exp(-||delta_ij||^2)`` (A, W)."""
    delta = authors[:, None, :] - words[None, :, :]
    return delta, np.exp(-np.einsum("ijd,ijd->ij", delta, delta))


def partition_function(authors, words, p_authors, p_words) -> float:
    """``Z = sum_ij p_i p_j exp(-||phi_i - psi_j||^2)`` (eq. 1)."""
    _, g = _pair_terms(np.asarray(authors, float), np.asarray(words, float))
    return float(p_authors @ g @ p_words)


def log_likelihood(theta: np.ndarray, p_joint: np.ndarray) -> float:
    """Exact normalised CODE log-likelihood (eq. 2) of positions ``theta`` ((A+W) x k);
    :func:`embedlab.kernels.cooccurrence.log_likelihood_and_gradient` gives both."""
    return log_likelihood_and_gradient(theta, p_joint)[0]


def log_likelihood_gradient(theta: np.ndarray, p_joint: np.ndarray) -> np.ndarray:
    """Gradient of :func:`log_likelihood` with respect to ``theta`` ((A+W) x k)."""
    return log_likelihood_and_gradient(theta, p_joint)[1]


@dataclass
class TaylorPieces:
    """Second-order Taylor expansion of ``Z`` around ``expansion`` ((A+W) x k).

    ``z`` is Z at the expansion point, ``grad`` (A+W, k) its gradient (eta_bar, eq. 11) and
    ``hessian`` (k(A+W), k(A+W)) its Hessian (Lambda_bar, eq. 12).
    """

    expansion: np.ndarray
    z: float
    grad: np.ndarray
    hessian: np.ndarray


def _block_laplacian(B: np.ndarray) -> np.ndarray:
    """Assemble the k(A+W) square matrix with pair blocks ``[[B_ij, -B_ij], [-B_ij, B_ij]]``.

    ``B`` is (A, W, k, k); author-author and word-word blocks are diagonal (sums of B).
    """
    A, W, k, _ = B.shape
    n = A + W
    M = np.zeros((n, k, n, k))
    M[:A, :, A:, :] = -B.transpose(0, 2, 1, 3)
    M[A:, :, :A, :] = -B.transpose(1, 3, 0, 2)
    ia, iw = np.arange(A), np.arange(A, n)
    M[ia, :, ia, :] = B.sum(axis=1)
    M[iw, :, iw, :] = B.sum(axis=0)
    return M.reshape(n * k, n * k)


def taylor_pieces(expansion, p_authors, p_words) -> TaylorPieces:
    """Value, gradient (eq. 8, 11) and Hessian (eq. 9, 12) of ``Z`` at ``expansion``.

    With ``g_ij = exp(-||xi_i - zeta_j||^2)``, ``delta_ij = xi_i - zeta_j``, ``w_ij = p_i p_j``:
    ``dZ/dphi_i = sum_j w_ij (-2 g_ij delta_ij)``, ``dZ/dpsi_j = -sum_i w_ij (-2 g_ij delta_ij)``,
    ``H11_ij = 2 g_ij (2 delta delta^T - I) = H22_ij = -H12_ij``.
    """
    expansion = np.asarray(expansion, dtype=np.float64)
    A = len(p_authors)
    k = expansion.shape[1]
    delta, g = _pair_terms(expansion[:A], expansion[A:])
    w = np.outer(p_authors, p_words)
    wg = w * g
    pair_grad = -2.0 * wg[:, :, None] * delta
    grad = np.concatenate([pair_grad.sum(axis=1), -pair_grad.sum(axis=0)])
    outer = np.einsum("ijd,ije->ijde", delta, delta)
    H11 = 2.0 * wg[:, :, None, None] * (2.0 * outer - np.eye(k))
    return TaylorPieces(expansion, float(wg.sum()), grad, _block_laplacian(H11))


def laplacian_precision(p_joint: np.ndarray, k: int) -> np.ndarray:
    """``Lambda_tilde`` (eq. 10, 14): ``Theta^T Lambda_tilde Theta = sum_ij p_ij d_ij``."""
    return _block_laplacian(p_joint[:, :, None, None] * np.eye(k))


def partition_function_taylor(theta, pieces: TaylorPieces) -> float:
    """Second-order Taylor approximation of ``Z`` at ``theta`` (eq. 7, summed as in 16)."""
    d = (np.asarray(theta, float) - pieces.expansion).ravel()
    return float(pieces.z + pieces.grad.ravel() @ d + 0.5 * d @ pieces.hessian @ d)


def log_partition_taylor(theta, pieces: TaylorPieces) -> float:
    """The paper's approximation of ``log Z``: ``lambda Z~ - 1 - log lambda`` (eq. 6 with 7)."""
    lam = 1.0 / pieces.z
    return float(lam * partition_function_taylor(theta, pieces) - 1.0 - np.log(lam))


def observation_canonical(p_joint: np.ndarray, expansion: np.ndarray):
    """Canonical parameters ``(eta_approx, Lambda_approx)`` of the Gaussian observation model.

    Eq. (13), expanded around ``expansion`` ((A+W) x k): ``Lambda = 2 Lambda_tilde + lambda
    Lambda_bar`` and ``eta = -lambda (eta_bar - Lambda_bar Theta_0)``, so that ``eta^T Theta -
    1/2 Theta^T Lambda Theta`` has the exact log-likelihood gradient at ``Theta_0``. Returns
    ``eta`` flattened (k(A+W),) and ``Lambda`` (k(A+W), k(A+W)); ``Lambda`` may be indefinite.
    """
    p_joint = np.asarray(p_joint, dtype=np.float64)
    expansion = np.asarray(expansion, dtype=np.float64)
    k = expansion.shape[1]
    pieces = taylor_pieces(expansion, p_joint.sum(axis=1), p_joint.sum(axis=0))
    lam = 1.0 / pieces.z
    precision = 2.0 * laplacian_precision(p_joint, k) + lam * pieces.hessian
    eta = -lam * (pieces.grad.ravel() - pieces.hessian @ expansion.ravel())
    return eta, precision


def approximate_log_likelihood(theta, p_joint, expansion) -> float:
    """Quadratic approximation of eq. (2) around ``expansion`` (up to its constant ``-C``).

    ``-Theta^T Lambda_tilde Theta - log Z~(Theta)`` with ``log Z~`` from
    :func:`log_partition_taylor`; equals :func:`log_likelihood` at the expansion point.
    """
    theta = np.asarray(theta, dtype=np.float64)
    k = theta.shape[1]
    pieces = taylor_pieces(expansion, p_joint.sum(axis=1), p_joint.sum(axis=0))
    x = theta.ravel()
    return float(-x @ laplacian_precision(p_joint, k) @ x - log_partition_taylor(theta, pieces))


# --------------------------------------------------------------------------------------
# Gaussian beliefs and the Kalman steps


def nearest_positive_definite(M: np.ndarray, floor: float) -> tuple[np.ndarray, int]:
    """Nearest symmetric matrix (Frobenius) with all eigenvalues >= ``floor`` > 0.

    The symmetric part's eigenvalues below ``floor`` are set to ``floor`` (Appendix).
    Returns the matrix and the number of eigenvalues that were raised.
    """
    if not floor > 0:
        raise ValueError(f"eigenvalue floor must be positive, got {floor!r}")
    w, V = scipy.linalg.eigh(0.5 * (M + M.T), driver="evd")
    raised = int(np.count_nonzero(w < floor))
    return (V * np.maximum(w, floor)) @ V.T, raised


def spd_inverse(M: np.ndarray, what: str = "matrix") -> np.ndarray:
    """Inverse of a symmetric positive-definite matrix (Cholesky); raises if not PD."""
    chol, info = scipy.linalg.lapack.dpotrf(M, lower=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"{what} is not positive definite (Cholesky info {info})")
    inv, info = scipy.linalg.lapack.dpotri(chol, lower=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"{what} is singular (Cholesky inverse info {info})")
    inv = np.tril(inv)
    return inv + np.tril(inv, -1).T


@dataclass
class GaussianBelief:
    """A Gaussian over the flattened state: mean and both covariance and precision (dense)."""

    mean: np.ndarray
    covariance: np.ndarray
    precision: np.ndarray

    def predict(self, transition_var: float) -> GaussianBelief:
        """Prediction step (eq. 5): same mean, covariance + ``transition_var * I``."""
        cov = self.covariance + transition_var * np.eye(self.mean.size)
        return GaussianBelief(self.mean.copy(), cov, spd_inverse(cov, "predicted covariance"))

    @classmethod
    def isotropic(cls, mean: np.ndarray, variance: float) -> GaussianBelief:
        eye = np.eye(mean.size)
        return cls(np.ravel(mean).astype(np.float64), variance * eye, eye / variance)


def project_observation(
    eta: np.ndarray, precision: np.ndarray, expansion: np.ndarray, floor: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """Make the observation Gaussian proper: nearest positive-definite precision (Appendix).

    Eigenvalues of ``precision`` below ``floor`` are raised to ``floor``; ``eta`` is shifted by
    ``(Lambda_pd - Lambda) Theta_0`` so the quadratic keeps its gradient ``eta - Lambda Theta_0``
    (the exact log-likelihood gradient) at the expansion point. Returns ``(eta, Lambda_pd,
    n_raised)``; a positive-definite input is returned unchanged.
    """
    x0 = np.asarray(expansion, dtype=np.float64).ravel()
    projected, raised = nearest_positive_definite(precision, floor)
    if raised == 0:
        return eta, precision, 0
    return eta + (projected - precision) @ x0, projected, raised


def condition(prior: GaussianBelief, obs_eta: np.ndarray, obs_precision: np.ndarray):
    """Conditioning in information form (eq. 4): add the canonical parameters.

    ``Lambda_post = Lambda_prior + Lambda_obs``, ``eta_post = Lambda_prior mu_prior + eta_obs``,
    ``mu_post = Lambda_post^{-1} eta_post``. Raises if the posterior precision is not positive
    definite (project the observation first).
    """
    precision = prior.precision + obs_precision
    precision = 0.5 * (precision + precision.T)
    covariance = spd_inverse(precision, "posterior precision")
    eta = prior.precision @ prior.mean + obs_eta
    return GaussianBelief(covariance @ eta, covariance, precision)


def entity_blocks(M: np.ndarray, k: int) -> np.ndarray:
    """The k x k diagonal blocks of a k n square matrix, as (n, k, k)."""
    n = M.shape[0] // k
    idx = np.arange(n)
    return M.reshape(n, k, n, k)[idx, :, idx, :]


def difference_covariances(cov: np.ndarray, n_authors: int, k: int) -> np.ndarray:
    """Covariance of every ``phi_i - psi_j``: ``S_ii + S_jj - S_ij - S_ji``, (A, W, k, k)."""
    n = cov.shape[0] // k
    S = cov.reshape(n, k, n, k)
    blocks = entity_blocks(cov, k)
    cross = S[:n_authors, :, n_authors:, :].transpose(0, 2, 1, 3)  # S_{i, A+j}: (A, W, k, k)
    return blocks[:n_authors, None] + blocks[None, n_authors:] - cross - cross.transpose(0, 1, 3, 2)


# --------------------------------------------------------------------------------------
# prediction: p(w | a) from positions or from position distributions


def log_expected_affinity(mean_diff: np.ndarray, cov_diff: np.ndarray | None = None):
    """``log E[exp(-||d||^2)]`` for ``d ~ N(m, S)``: ``-1/2 log det(I+2S) - m^T (I+2S)^{-1} m``.

    ``mean_diff`` is (..., k), ``cov_diff`` (..., k, k); ``None`` means a point estimate
    (``-||m||^2``).
    """
    m = np.asarray(mean_diff, dtype=np.float64)
    if cov_diff is None:
        return -np.einsum("...d,...d->...", m, m)
    k = m.shape[-1]
    M = np.eye(k) + 2.0 * np.asarray(cov_diff, dtype=np.float64)
    sign, logdet = np.linalg.slogdet(M)
    if (sign <= 0).any():
        raise ValueError("difference covariance is not positive semi-definite")
    quad = np.einsum("...d,...d->...", m, np.linalg.solve(M, m[..., None])[..., 0])
    return -0.5 * logdet - quad


def log_word_given_author(
    author_pos: np.ndarray,
    word_pos: np.ndarray,
    p_words: np.ndarray,
    cov_diff: np.ndarray | None = None,
) -> np.ndarray:
    """``log p(w_j | a_i)`` (A, W) from the CODE model (eq. 1).

    ``p(a_i, w_j) ~ p_i p_j E[exp(-||phi_i - psi_j||^2)]`` with the expectation over the
    position distributions (``cov_diff``: covariance of ``phi_i - psi_j``, (A, W, k, k)) or at
    point positions (``cov_diff=None``); conditioning on ``a_i`` cancels ``p_i`` and ``Z``:
    ``p(w_j | a_i) = p_j e_ij / sum_l p_l e_il``. Words with ``p_j = 0`` get ``-inf``.
    """
    p_words = np.asarray(p_words, dtype=np.float64)
    if p_words.shape != (len(word_pos),) or (p_words < 0).any() or not p_words.sum() > 0:
        raise ValueError(f"p_words must be {len(word_pos)} non-negative weights, not all zero")
    delta = author_pos[:, None, :] - word_pos[None, :, :]
    with np.errstate(divide="ignore"):
        log_joint = log_expected_affinity(delta, cov_diff) + np.log(p_words)[None, :]
    return log_joint - scipy.special.logsumexp(log_joint, axis=1, keepdims=True)


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
