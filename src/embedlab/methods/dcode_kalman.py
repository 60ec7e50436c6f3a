"""D-CODE's Kalman filter over the flattened positions (Sarkar et al., 2007, eq. 3-5):
Gaussian beliefs in both covariance and precision form, their prediction and conditioning.

A belief over the state Theta (k(A+W) coordinates, entity-major) keeps its mean, covariance
and precision (dense). Prediction (eq. 5), a random walk, adds ``transition_var * I`` to the
covariance; conditioning on a Gaussian observation in canonical form (eq. 4) adds the
canonical parameters. Filtering only (the paper filters up to T-1 and predicts T; no
smoothing). :func:`entity_blocks` and :func:`difference_covariances` read a belief's
covariance per entity and per author-word pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg


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
