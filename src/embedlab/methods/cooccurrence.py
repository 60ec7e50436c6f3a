"""The CODE model of co-occurrence data (D-CODE, Sarkar et al., 2007, eq. 1-2), shared by
D-CODE and its baselines: counts in, the model's likelihood, and its prediction ``p(w | a)``.

For one count matrix C with empirical joint ``p_ij = C_ij / sum C`` and marginals ``p_i``,
``p_j``::

    p(a_i, w_j | phi, psi) = p_i p_j exp(-||phi_i - psi_j||^2) / Z,
    Z = sum_ij p_i p_j exp(-||phi_i - psi_j||^2)
    L(Theta) = -sum_ij p_ij ||phi_i - psi_j||^2 - log Z                     (2)

``Theta`` stacks the author coordinates ``phi_i`` (rows 0..A-1) and the word coordinates
``psi_j`` (rows A..A+W-1); flattened it is the state vector of length k(A+W), entity-major.
The exact likelihood and its gradient are the numba kernel
:func:`embedlab.kernels.cooccurrence.log_likelihood_and_gradient`.

Prediction (section 4.1): ``p(w_j | a_i)`` from eq. (1), at point positions or with
``E[exp(-||phi_i - psi_j||^2)]`` in closed form under a Gaussian distribution of
``phi_i - psi_j``; conditioning on ``a_i`` cancels ``p_i`` and ``Z``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.special

from embedlab.kernels.cooccurrence import log_likelihood_and_gradient

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
# the CODE model


def pair_terms(authors: np.ndarray, words: np.ndarray):
    """Differences ``delta_ij = phi_i - psi_j`` (A, W, k) and ``exp(-||delta_ij||^2)`` (A, W)."""
    delta = authors[:, None, :] - words[None, :, :]
    return delta, np.exp(-np.einsum("ijd,ijd->ij", delta, delta))


def partition_function(authors, words, p_authors, p_words) -> float:
    """``Z = sum_ij p_i p_j exp(-||phi_i - psi_j||^2)`` (eq. 1)."""
    _, g = pair_terms(np.asarray(authors, float), np.asarray(words, float))
    return float(p_authors @ g @ p_words)


def log_likelihood(theta: np.ndarray, p_joint: np.ndarray) -> float:
    """Exact normalised CODE log-likelihood (eq. 2) of positions ``theta`` ((A+W) x k);
    :func:`embedlab.kernels.cooccurrence.log_likelihood_and_gradient` gives both."""
    return log_likelihood_and_gradient(theta, p_joint)[0]


def log_likelihood_gradient(theta: np.ndarray, p_joint: np.ndarray) -> np.ndarray:
    """Gradient of :func:`log_likelihood` with respect to ``theta`` ((A+W) x k)."""
    return log_likelihood_and_gradient(theta, p_joint)[1]

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
