"""D-CODE's Gaussian observation model: the CODE likelihood of one step approximated by a
quadratic in the positions (Sarkar et al., 2007, section 3.2.1 and Appendix).

In the model of :mod:`embedlab.methods.cooccurrence`, ``log Z ~ lambda Z - 1 - log lambda``
with ``lambda = 1/z`` (6), and ``Z`` replaced by its second-order Taylor expansion around the
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
``Theta_0``. The paper expands at the predicted mean ``mu_{t|t-1}`` (section 3.2.1);
:class:`embedlab.methods.dcode.DCODE` also at the posterior mode (its ``conditioning``).

The observation precision may be indefinite (the CODE likelihood has negative curvature near
the origin); :func:`project_observation` projects it to the nearest positive-definite matrix
(negative eigenvalues raised to a small positive floor; Appendix), so the observation model is
a proper Gaussian, and shifts ``eta`` so the gradient at ``Theta_0`` is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from embedlab.methods.cooccurrence import pair_terms

# --------------------------------------------------------------------------------------
# the pieces of the Taylor approximation of Z


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
    delta, g = pair_terms(expansion[:A], expansion[A:])
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
# a proper Gaussian: the positive-definite projection


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
