"""The energy of a Diffeomap flow (Walder & Schoelkopf, NIPS 2008, section 3), in its two
reduced-set formulations, with its gradient by reverse mode.

The data Z (m x r, in the PCA frame of :mod:`embedlab.methods.diffeomap`) moves along a flow
whose velocity field v(., t) has each component in the RKHS of the Gaussian kernel
k(x, y) = exp(-||x - y||^2 / (2 sigma^2)); time is discretised as t_k = k / p, the
trajectories are Phi_k = phi(Z, t_k) (m x r, Phi_0 = Z), and the energy is

    E(Phi_1..Phi_p) = sum_{k<p} (1/p) tr(V_k^T A_k V_k)  +  lam sum_j L(Phi_p[j]),
    V_k = p (Phi_{k+1} - Phi_k),     L(y) = sum_{d > b} y_d^2   (b = n_components).

Full set (the reference): A = (K + eps 1)^-1, K = K(Phi_k, Phi_k); eps -> 0 is the paper's
K^-1 (the RKHS norm of the interpolating field).

Reduced set, ``formulation="span"`` (the default; the paper's section 3.2: "replaces the sum
over 1..m in (9) with a sum over a randomly selected subset I, thereby using n basis functions
to represent v"). The field is spanned by the n basis functions riding on the basis points, and
the trajectories are what it does to the data (shooting):

    v_k(x) = sum_{i in I} beta_k[i] k(Phi_k[i], x),   Phi_{k+1} = Phi_k + (1/p) K_mn(Phi_k) beta_k,
    E(beta) = sum_{k<p} (1/p) tr(beta_k^T K_nn(Phi_k) beta_k) + lam sum_j L(Phi_p[j]),

over beta (p, n, r) from beta = 0 (Phi_k = X, the paper's start); gradient by reverse mode
through the Euler steps (:func:`span_energy`), O(m n r) per step. With I = all points every V
is K beta and this is exactly the full-set energy with eps = 0. The map is the flow's image of
the data by construction: ``Diffeomap.transform`` repeats the same Euler steps with the same
centres and coefficients. Caveat: a point farther than a few sigma from every basis point
cannot move, so n and sigma must let the basis functions cover the data.

Reduced set, ``formulation="charged"`` (kept for comparison): free trajectories, with
the Nystrom approximation of K plus eps 1 inverted by Woodbury:

    A = (K_mn K_nn^-1 K_nm + eps 1)^-1 = eps^-1 (1 - K_mn (eps K_nn + K_nm K_mn)^-1 K_nm).

With Y = (eps K_nn + K_nm K_mn)^-1 K_nm V and R = (V - K_mn Y) / eps:

    tr(V^T A V) = tr(V^T R) = min_beta tr(beta^T K_nn beta) + ||V - K_mn beta||^2 / eps,

attained at beta = Y: the RKHS norm of the field v = sum_{i in I} Y_i k(Phi_k[i], .) plus the
velocity it does not represent, charged at 1/eps. That residual is a white-noise part: each
point may move on its own at cost 1/eps, so the fitted end points Phi_p are NOT the image of
the data under the learned field (on vowel they differ completely) and depend on eps.
Derivatives:

    dE/dV = 2 R,    dE/dK_mn = -2 R Y^T,    dE/dK_nn = Y Y^T,

pulled back to the trajectories with :func:`embedlab.kernels.diffeomap.gaussian_kernel_vjp`
(K_nn = rows I of K_mn). Cost per step O(m n^2 + n^3 + m n r). For I = all points the
reduced energy equals the full one at the same eps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from embedlab.kernels.diffeomap import full_flow_energy, gaussian_kernel, gaussian_kernel_vjp

# ----------------------------------------------------------------------------- full set and charged


def _solve(M: np.ndarray, rhs: np.ndarray, what: str, sigma: float, eps: float):
    """M^-1 rhs, with a message naming the matrix when it is singular.

    numpy's LAPACK on purpose, not scipy's: scipy's wheels carry a second OpenBLAS whose
    thread pool, alternating with numpy's, made evaluations 3-20x slower on 2 shared cores.
    """
    try:
        return np.linalg.solve(M, rhs)
    except np.linalg.LinAlgError as err:
        raise np.linalg.LinAlgError(
            f"Diffeomap: {what} is singular (sigma={sigma}, eps={eps}); points have "
            "(nearly) collided -- use a smaller sigma or a larger eps"
        ) from err


def _step_full(Phi, V, sigma, eps):
    """||v||^2 = tr(V^T (K + eps 1)^-1 V); its gradients wrt V and Phi; coefficients alpha."""
    K = gaussian_kernel(Phi, Phi, sigma)
    M = K.copy()
    M.flat[:: len(M) + 1] += eps
    alpha = _solve(M, V, "K + eps 1", sigma, eps)
    norm2 = float(np.sum(V * alpha))
    grad_rows, grad_cols = gaussian_kernel_vjp(-(alpha @ alpha.T), K, Phi, Phi, sigma)
    return norm2, 2.0 * alpha, grad_rows + grad_cols, alpha


def _step_reduced(Phi, V, basis, sigma, eps):
    """tr(V^T R), R = (V - K_mn Y) / eps, Y = (eps K_nn + K_nm K_mn)^-1 K_nm V; gradients; Y."""
    if eps <= 0:
        raise ValueError(f"Diffeomap: the reduced-set energy needs eps > 0, got eps={eps}")
    centres = Phi[basis]
    Kmn = gaussian_kernel(Phi, centres, sigma)
    Knn = Kmn[basis]
    B = Kmn.T @ Kmn + eps * Knn
    Y = _solve(B, Kmn.T @ V, "eps K_nn + K_nm K_mn", sigma, eps)
    R = (V - Kmn @ Y) / eps
    norm2 = float(np.sum(V * R))
    weight = -2.0 * (R @ Y.T)  # dE/dK_mn
    weight[basis] += Y @ Y.T  # dE/dK_nn (K_nn = rows I of K_mn)
    grad_Phi, grad_centres = gaussian_kernel_vjp(weight, Kmn, Phi, centres, sigma)
    grad_Phi[basis] += grad_centres
    return norm2, 2.0 * R, grad_Phi, Y


def _step(Phi, V, basis, sigma, eps):
    if basis is None:
        return _step_full(Phi, V, sigma, eps)
    return _step_reduced(Phi, V, basis, sigma, eps)


@dataclass
class EnergyParts:
    energy: float
    kinetic: float  # sum_k (1/p) ||v_k||^2
    off_subspace: float  # sum_j L(Phi_p[j]) (not multiplied by lam)
    grad: np.ndarray  # dE / dtrajectories, (p + 1, m, r); row 0 is dE/dPhi_0


def diffeomap_energy(
    trajectories: np.ndarray,
    sigma: float,
    lam: float,
    n_components: int,
    basis: np.ndarray | None = None,
    eps: float = 1.0,
) -> EnergyParts:
    """E = sum_{k<p} (1/p) tr(V_k^T A_k V_k) + lam sum_j sum_{d>=b} Phi_p[j, d]^2 and dE/dPhi.

    ``trajectories`` is (p + 1, m, r) with Phi_0 first; ``basis`` None means the full set,
    A = (K + eps 1)^-1; otherwise the charged reduced set, A = (K_mn K_nn^-1 K_nm + eps 1)^-1.
    """
    p = trajectories.shape[0] - 1
    grad = np.zeros_like(trajectories)
    kinetic = 0.0
    for k in range(p):
        V = p * (trajectories[k + 1] - trajectories[k])
        norm2, dV, dPhi, _ = _step(trajectories[k], V, basis, sigma, eps)
        kinetic += norm2 / p
        # E_k = norm2 / p, V = p (Phi_{k+1} - Phi_k): dE_k/dPhi_{k+1} = dV, dE_k/dPhi_k = ...
        grad[k + 1] += dV
        grad[k] += dPhi / p - dV
    off = trajectories[p][:, n_components:]
    off_subspace = float(np.sum(off * off))
    grad[p][:, n_components:] += 2.0 * lam * off
    return EnergyParts(kinetic + lam * off_subspace, kinetic, off_subspace, grad)


def velocity_coefficients(
    trajectories: np.ndarray, sigma: float, basis: np.ndarray | None = None, eps: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """(centres, coef), each (p, n, r): v_k(x) = sum_i coef[k, i] k(centres[k, i], x).

    Full set: centres = Phi_k, coef = (K + eps 1)^-1 V_k; reduced set: centres = Phi_k[I],
    coef = Y_k = (eps K_nn + K_nm K_mn)^-1 K_nm V_k -- the field whose norm the energy charges.
    """
    p = trajectories.shape[0] - 1
    rows = slice(None) if basis is None else basis
    centres = np.stack([trajectories[k][rows] for k in range(p)])
    coef = np.stack(
        [
            _step(trajectories[k], p * (trajectories[k + 1] - trajectories[k]), basis, sigma, eps)[
                3
            ]
            for k in range(p)
        ]
    )
    return centres, coef


# ----------------------------------------------------------------------------- span (shooting)


@dataclass
class SpanEnergyParts:
    energy: float
    kinetic: float  # sum_k (1/p) tr(beta_k^T K_nn(Phi_k) beta_k)
    off_subspace: float  # sum_j L(Phi_p[j]) (not multiplied by lam)
    grad: np.ndarray  # dE / dbeta, (p, n, r)
    trajectories: np.ndarray  # (p + 1, m, r), Phi_0 = Z: what the field does to the data


def span_trajectories(Z: np.ndarray, beta: np.ndarray, basis: np.ndarray, sigma: float):
    """Phi_0 = Z, Phi_{k+1} = Phi_k + (1/p) K(Phi_k, Phi_k[I]) beta_k; (trajectories, kernels)."""
    p = len(beta)
    trajectories = np.empty((p + 1,) + Z.shape)
    trajectories[0] = Z
    kernels = []
    for k in range(p):
        Kmn = gaussian_kernel(trajectories[k], trajectories[k][basis], sigma)
        kernels.append(Kmn)
        trajectories[k + 1] = trajectories[k] + (Kmn @ beta[k]) / p
    return trajectories, kernels


def is_every_point(basis: np.ndarray, m: int) -> bool:
    """True when the basis indices are 0..m-1 in order (the full set)."""
    return len(basis) == m and bool(np.array_equal(basis, np.arange(m)))


#: the ways :func:`span_energy` computes the energy
SPAN_PATHS = ("auto", "matrices")


def span_energy(
    Z: np.ndarray,
    beta: np.ndarray,
    sigma: float,
    lam: float,
    n_components: int,
    basis: np.ndarray,
    kernels: np.ndarray | None = None,
    *,
    path: str = "auto",
) -> SpanEnergyParts:
    """The reduced set as the paper's text defines it: the field is spanned by the n basis
    functions that ride on the basis points, and the trajectories are what it does (shooting).

        v_k(x) = sum_{i in I} beta_k[i] k(Phi_k[i], x),  Phi_{k+1} = Phi_k + (1/p) v_k(Phi_k),
        E(beta) = sum_{k<p} (1/p) tr(beta_k^T K_nn(Phi_k) beta_k) + lam sum_j L(Phi_p[j]).

    ``beta`` is (p, n, r), ``basis`` the n indices I (all points: the full-set energy, since
    then every V_k = K beta_k and tr(V^T K^-1 V) = tr(beta^T K beta), the paper's eq. 13).
    Gradient by reverse mode through the Euler steps; cost O(m n r) per step.

    ``path="auto"``: with I = every point (0..m-1) the fused kernel
    :func:`embedlab.kernels.diffeomap.full_flow_energy` computes it (row blocks, no O(m^2)
    temporaries: the matrix path's memory traffic dominates its time there; given
    ``kernels``, a :func:`embedlab.kernels.diffeomap.flow_kernel_buffer` that a fit's
    evaluations share, the forward pass keeps K_k there for the reverse pass, bitwise the
    matrices the reverse pass would otherwise recompute); otherwise the matrix path.
    ``path="matrices"``: the matrix path for any basis (the reference the fused kernel is
    tested and timed against): the kernel matrices K_mn(Phi_k) stored and BLAS products,
    O(p m n) memory (``kernels`` unused).
    """
    if path not in SPAN_PATHS:
        raise ValueError(f"span_energy: path must be one of {SPAN_PATHS}, got {path!r}")
    if path == "auto" and is_every_point(basis, len(Z)):
        kinetic, off_subspace, grad, trajectories = full_flow_energy(
            Z, beta, sigma, lam, n_components, kernels=kernels
        )
        return SpanEnergyParts(
            kinetic + lam * off_subspace, kinetic, off_subspace, grad, trajectories
        )
    p = len(beta)
    trajectories, matrices = span_trajectories(Z, beta, basis, sigma)
    kinetic = 0.0
    for k in range(p):
        kinetic += float(np.sum(beta[k] * (matrices[k][basis] @ beta[k]))) / p
    off = trajectories[p][:, n_components:]
    off_subspace = float(np.sum(off * off))
    grad = np.empty_like(beta)
    G = np.zeros_like(Z)  # dE/dPhi_{k+1}
    G[:, n_components:] = 2.0 * lam * off
    for k in reversed(range(p)):
        Kmn, Phi = matrices[k], trajectories[k]
        Knn_beta = Kmn[basis] @ beta[k]
        grad[k] = (Kmn.T @ G + 2.0 * Knn_beta) / p
        weight = (G @ beta[k].T) / p  # dE/dK_mn through V_k = K_mn beta_k
        weight[basis] += (beta[k] @ beta[k].T) / p
        grad_Phi, grad_centres = gaussian_kernel_vjp(weight, Kmn, Phi, Phi[basis], sigma)
        grad_Phi[basis] += grad_centres
        G = G + grad_Phi
    return SpanEnergyParts(kinetic + lam * off_subspace, kinetic, off_subspace, grad, trajectories)
