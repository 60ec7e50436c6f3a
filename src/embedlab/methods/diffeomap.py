"""Diffeomap (Walder & Schoelkopf, NIPS 2008): dimensionality reduction by a diffeomorphic flow.

Input x_j in R^a (j = 1..m) is centred and rotated onto its principal axes (all of them, so
nothing is lost; r = min(a, m - 1) axes). A flow phi(x, t), phi(x, 0) = x,
d phi / dt = v(phi, t), with each component of v(., t) in the RKHS of the Gaussian kernel
k(x, y) = exp(-||x - y||^2 / (2 sigma^2)), is fitted by minimising (paper section 3), with the
time discretised as t_k = k / p and the trajectories Phi_k = phi(X, t_k) (m x r, Phi_0 = X):

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
the data by construction: transform(X) repeats the same Euler steps with the same centres and
coefficients. Caveat: a point farther than a few sigma from every basis point cannot move, so
n and sigma must let the basis functions cover the data.

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

New points are mapped by the same forward-Euler scheme that defines V_k: x_{k+1} = x_k +
(1/p) v_k(x_k) (span: exactly the fitted trajectories on the training data; charged: the
field Y, without the residual); the inverse solves x_k + (1/p) v_k(x_k) = x_{k+1} for
k = p-1..0 by Newton's method, started from x_{k+1} - (1/p) v_k(x_{k+1}); recovering the
inputs from their images checks that the discrete map is invertible on the data. (The
continuous flow cannot fold; an Euler step with (1/p) Lip(v_k) >= 1 can, and then Newton
finds another preimage or fails with an error.)

Optimiser (``optimizer``): scipy's L-BFGS (default; the better at equal gradient evaluations,
benchmarks/README.md) or nonlinear conjugate gradient (Polak-Ribiere, the paper's), for
``max_iter`` iterations from Phi_k = X. Output: the first b coordinates of Phi_p.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from embedlab.checks import check_points
from embedlab.kernels.diffeomap import (
    flow_kernel_buffer,
    full_flow_energy,
    gaussian_kernel,
    gaussian_kernel_vjp,
)
from embedlab.methods.conventions import keep_arguments, points_of

log = logging.getLogger(__name__)

#: optimiser iterations between progress lines (energy) in the fit's log
LOG_EVERY = 50


# ----------------------------------------------------------------------------- PCA frame


@dataclass(frozen=True)
class PCARotation:
    """Centring and rotation onto the principal axes: Z = (X - mean) @ rotation."""

    mean: np.ndarray  # (a,)
    rotation: np.ndarray  # (a, r), orthonormal columns by decreasing variance

    def apply(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean) @ self.rotation

    def invert(self, Z: np.ndarray) -> np.ndarray:
        return Z @ self.rotation.T + self.mean


def fit_pca_rotation(X: np.ndarray) -> PCARotation:
    """All r = min(a, m - 1) principal axes of X (a lossless rotation of the centred data).

    Signs are fixed so that each axis's largest-magnitude entry is positive.
    """
    m, a = X.shape
    mean = X.mean(axis=0)
    _, _, Vt = np.linalg.svd(X - mean, full_matrices=False)
    axes = Vt[: min(a, max(m - 1, 1))]
    signs = np.sign(axes[np.arange(len(axes)), np.argmax(np.abs(axes), axis=1)])
    return PCARotation(mean=mean, rotation=(axes * signs[:, None]).T.copy())


def select_basis(
    X: np.ndarray, n_basis: int | None, rng: np.random.Generator
) -> np.ndarray | None:
    """Sorted indices of ``n_basis`` distinct rows of X drawn at random, or None for all.

    Only distinct points are eligible (a repeated basis point makes K_nm K_mn singular); pass
    the raw input, where repeated points are bit-identical. When ``n_basis`` reaches the number
    of distinct points, all of them are used; if that is every point, None is returned (the
    exact full-set energy). ``n_basis=None`` asks for every distinct point without a warning.
    """
    m = len(X)
    _, first = np.unique(X, axis=0, return_index=True)
    distinct = np.sort(first)
    if n_basis is None:
        n_basis = len(distinct)
    if n_basis > len(distinct):
        warnings.warn(
            f"n_basis={n_basis} exceeds the {len(distinct)} distinct points of X; using all "
            "of them",
            stacklevel=3,
        )
    if n_basis >= len(distinct):
        return None if len(distinct) == m else distinct
    return np.sort(rng.choice(distinct, size=n_basis, replace=False))


# ----------------------------------------------------------------------------- energy


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


# ----------------------------------------------------------------------------- flow


def _velocity(x, centres, coef, sigma):
    """v(x) = sum_i coef_i k(centres_i, x) for the rows of x."""
    return gaussian_kernel(x, centres, sigma) @ coef


def _velocity_jacobian(x, centres, coef, sigma):
    """(v(x), dv/dx): dv/dx = -(1/sigma^2) (v(x) x^T - sum_i k(x, c_i) coef_i c_i^T), (q, r, r)."""
    Kx = gaussian_kernel(x, centres, sigma)
    v = Kx @ coef
    weighted = np.matmul((Kx[:, :, None] * coef[None]).transpose(0, 2, 1), centres)
    return v, -(v[:, :, None] * x[:, None, :] - weighted) / (sigma * sigma)


def _invert_euler_step(Y, centres, coef, sigma, h, tol, max_newton, chunk):
    """Solve x + h v(x) = y for every row y of Y by Newton's method (explicit r x r Jacobian)."""
    X = Y - h * _velocity(Y, centres, coef, sigma)
    eye = np.eye(Y.shape[1])
    for start in range(0, len(Y), chunk):
        rows = slice(start, start + chunk)
        x, y = X[rows], Y[rows]
        limit = tol * (1.0 + np.max(np.abs(y)))
        for _ in range(max_newton):
            v, J = _velocity_jacobian(x, centres, coef, sigma)
            residual = x + h * v - y
            if np.max(np.abs(residual)) <= limit:
                break
            x = x - np.linalg.solve(eye + h * J, residual[:, :, None])[:, :, 0]
        else:
            raise RuntimeError(
                f"inverse flow: Newton did not converge in {max_newton} iterations "
                f"(largest residual {np.max(np.abs(residual)):.3g}); the Euler step is not "
                "invertible near these points"
            )
        X[rows] = x
    return X


def integrate_flow(
    Z: np.ndarray,
    centres: np.ndarray,
    coef: np.ndarray,
    sigma: float,
    *,
    inverse: bool = False,
    tol: float = 1e-12,
    max_newton: int = 50,
) -> np.ndarray:
    """Forward Euler through the p steps, x <- x + (1/p) v_k(x), or its exact inverse.

    The inverse solves x + (1/p) v_k(x) = y for k = p-1..0 by Newton's method until the
    residual is below tol * (1 + max|y|); non-convergence raises RuntimeError. It forms an
    r x r Jacobian per point (cost O(n r^2 + r^3) per point and iteration), so it is meant
    for checks in moderate dimension r.
    """
    p = len(coef)
    h = 1.0 / p
    Z = np.array(Z, dtype=np.float64)
    n, r = coef.shape[1:]
    chunk = max(1, 4_000_000 // (n * r + r * r))
    for k in reversed(range(p)) if inverse else range(p):
        if inverse:
            Z = _invert_euler_step(Z, centres[k], coef[k], sigma, h, tol, max_newton, chunk)
        else:
            Z = Z + h * _velocity(Z, centres[k], coef[k], sigma)
    return Z


# ----------------------------------------------------------------------------- optimisation


@dataclass(frozen=True)
class Optimum:
    """What :func:`_minimise` found: ``x`` the point of lowest energy evaluated (a failed line
    search may end on a worse one), the optimiser's iterations and message, the objective +
    gradient evaluations, the energy after each iteration and the lowest energy so far after
    each evaluation."""

    x: np.ndarray
    n_iter: int
    message: str
    n_evaluations: int
    energy_trace: np.ndarray
    evaluation_trace: np.ndarray


@dataclass(frozen=True)
class DiffeomapFit:
    """One formulation's fit: the trajectories (p + 1, m, r), the energy's ``parts`` at the
    optimum (:class:`EnergyParts` charged, :class:`SpanEnergyParts` span), the optimiser's
    outcome and, for the span formulation, ``coef``: beta (p, n, r), the field's
    coefficients."""

    trajectories: np.ndarray
    parts: EnergyParts | SpanEnergyParts
    optimum: Optimum
    coef: np.ndarray | None = None


OPTIMIZERS = {"lbfgs": "L-BFGS-B", "cg": "CG"}
FORMULATIONS = ("span", "charged")


class _Budget(Exception):
    pass


def _minimise(
    fun, x0, *, optimizer, max_iter, max_evaluations, what, on_iteration=None
) -> Optimum:
    """Run scipy's L-BFGS-B or CG on fun(x) -> (energy, grad); keep the lowest energy evaluated.

    ``on_iteration(n, x)``, if given, is called after iteration n with the optimiser's point.
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"Diffeomap: unknown optimizer={optimizer!r}; expected one of "
                         f"{sorted(OPTIMIZERS)}")  # fmt: skip
    state = {"evaluations": 0}
    best = {"energy": np.inf, "x": None}
    lowest: list[float] = []

    def objective(z):
        if max_evaluations is not None and state["evaluations"] >= max_evaluations:
            raise _Budget
        energy, grad = fun(z)
        state["evaluations"] += 1
        if not np.isfinite(energy) or not np.isfinite(grad).all():
            raise FloatingPointError(
                f"Diffeomap energy diverged ({energy}) after {state['evaluations']} "
                f"evaluations ({what})"
            )
        if energy < best["energy"]:
            best.update(energy=energy, x=z.copy())
        lowest.append(best["energy"])
        return energy, grad

    trace: list[float] = []

    def record(intermediate_result):
        trace.append(float(intermediate_result.fun))
        if on_iteration is not None:
            on_iteration(len(trace), intermediate_result.x)
        if len(trace) % LOG_EVERY == 0:
            log.info("%s iteration %d: energy %.6g", optimizer, len(trace), trace[-1])

    options = {"maxiter": int(max_iter), "gtol": 0.0}
    if optimizer == "lbfgs":
        options.update(ftol=0.0, maxfun=np.iinfo(np.int32).max, maxls=40)
    try:
        result = minimize(
            objective, x0, jac=True, method=OPTIMIZERS[optimizer], callback=record,
            options=options,
        )  # fmt: skip
        n_iter, message = int(result.nit), str(result.message)
    except _Budget:
        n_iter, message = len(trace), f"stopped after max_evaluations={max_evaluations}"
    # the lowest energy evaluated (a failed line search may end on a worse point)
    x = x0 if best["x"] is None else best["x"]
    evaluations = state["evaluations"]
    return Optimum(x, n_iter, message, evaluations, np.asarray(trace), np.asarray(lowest))


def fit_trajectories(
    Z: np.ndarray,
    *,
    n_components: int,
    sigma: float,
    lam: float,
    p: int,
    basis: np.ndarray | None,
    max_iter: int,
    eps: float = 1.0,
    init: np.ndarray | None = None,
    optimizer: str = "lbfgs",
    max_evaluations: int | None = None,
) -> DiffeomapFit:
    """Charged formulation: minimise E over Phi_1..Phi_p from Phi_k = Z (or ``init``).

    ``optimizer``: "lbfgs" (scipy L-BFGS-B, 10 corrections, no bounds) or "cg" (scipy's
    nonlinear CG, Polak-Ribiere). Runs ``max_iter`` iterations (gradient tolerance 0) or until
    ``max_evaluations`` objective+gradient evaluations, or until the line search fails.
    """
    m, r = Z.shape
    start = np.broadcast_to(Z, (p, m, r)) if init is None else init

    def fun(z):
        trajectories = np.concatenate([Z[None], z.reshape(p, m, r)])
        parts = diffeomap_energy(trajectories, sigma, lam, n_components, basis, eps)
        return parts.energy, parts.grad[1:].ravel()

    x0 = np.array(start, dtype=np.float64).ravel()
    optimum = _minimise(
        fun, x0, optimizer=optimizer, max_iter=max_iter, max_evaluations=max_evaluations,
        what=f"sigma={sigma}, lam={lam}",
    )  # fmt: skip
    trajectories = np.concatenate([Z[None], optimum.x.reshape(p, m, r)])
    parts = diffeomap_energy(trajectories, sigma, lam, n_components, basis, eps)
    return DiffeomapFit(trajectories, parts, optimum)


#: eigenvalues of K_nn(X[I]) below this fraction of the largest are raised to it in the
#: whitening of the span coefficients (``whiten=True``)
WHITEN_FLOOR = 1e-6


def whitening(Z: np.ndarray, basis: np.ndarray, sigma: float) -> np.ndarray:
    """S = K_nn(X[I])^-1/2 (symmetric; eigenvalues floored at WHITEN_FLOOR x the largest)."""
    Knn = gaussian_kernel(Z[basis], Z[basis], sigma)
    w, U = np.linalg.eigh(Knn)
    w = np.maximum(w, WHITEN_FLOOR * w[-1])
    return (U / np.sqrt(w)) @ U.T


def fit_span(
    Z: np.ndarray,
    *,
    n_components: int,
    sigma: float,
    lam: float,
    p: int,
    basis: np.ndarray,
    max_iter: int,
    optimizer: str = "lbfgs",
    whiten: bool = True,
    init: np.ndarray | None = None,
    max_evaluations: int | None = None,
    on_iteration=None,
) -> DiffeomapFit:
    """Span formulation (:func:`span_energy`): minimise E over beta (p, n, r) from beta = 0
    (the identity flow, the paper's start Phi_k = X), or from ``init``.

    ``whiten``: optimise gamma_k = K_nn(X[I])^1/2 beta_k instead of beta_k (the kinetic term
    is then ||gamma||^2 near the start; the Gaussian K_nn is badly conditioned, and in beta
    L-BFGS creeps). ``DiffeomapFit.coef`` holds beta; ``trajectories`` are its shooting.
    ``on_iteration(n, beta)`` is called after each iteration n (convergence studies). With I =
    every point the fit holds one :func:`embedlab.kernels.diffeomap.flow_kernel_buffer` (the
    kernel matrices of min(p, FLOW_STORE_BYTES / 8 m^2) steps: 1.17 GB at vowel's m = 2700,
    p = 20), which every evaluation's forward pass fills for its reverse pass.
    """
    m, r = Z.shape
    n = len(basis)
    S = whitening(Z, basis, sigma) if whiten else None
    kernels = flow_kernel_buffer(m, p) if is_every_point(basis, m) else None

    def whiten_apply(g):
        """S g_k for every k as one (n x n)(n x p r) product."""
        return (S @ g.transpose(1, 0, 2).reshape(n, p * r)).reshape(n, p, r).transpose(1, 0, 2)

    def to_beta(z):
        g = z.reshape(p, n, r)
        return g if S is None else whiten_apply(g)

    def fun(z):
        parts = span_energy(Z, to_beta(z), sigma, lam, n_components, basis, kernels)
        grad = parts.grad if S is None else whiten_apply(parts.grad)
        return parts.energy, grad.ravel()

    def iterated(k, z):
        on_iteration(k, to_beta(z))

    if init is None:
        x0 = np.zeros(p * n * r)
    elif S is None:
        x0 = np.array(init, dtype=np.float64).ravel()
    else:  # gamma = S^-1 beta
        x0 = np.linalg.solve(S, np.asarray(init, dtype=np.float64)).ravel()
    optimum = _minimise(
        fun, x0, optimizer=optimizer, max_iter=max_iter, max_evaluations=max_evaluations,
        what=f"sigma={sigma}, lam={lam}", on_iteration=None if on_iteration is None else iterated,
    )  # fmt: skip
    beta = to_beta(optimum.x)
    parts = span_energy(Z, beta, sigma, lam, n_components, basis, kernels)
    return DiffeomapFit(parts.trajectories, parts, optimum, coef=beta)


# ----------------------------------------------------------------------------- estimator


class Diffeomap(TransformerMixin, BaseEstimator):
    """Diffeomorphic dimensionality reduction (see the module docstring for the equations).

    Parameters: ``n_components`` b; ``sigma`` the Gaussian kernel width (in the units of X);
    ``lam`` the weight of the off-subspace penalty; ``p`` time steps; ``n_basis`` reduced-set
    size n (clipped, with a warning, to the number of distinct points; None: the exact
    full-set energy, every point a basis function under "span" (repeated points too: nothing
    is inverted, and the fused full-set kernel applies), every distinct point under "charged",
    whose K_nm K_mn a repeat makes singular); ``max_iter``
    optimiser iterations; ``eps`` the constant added to the (Nystrom-approximated) kernel
    matrix, eps = k(x, x) = 1 by default; ``optimizer``
    "lbfgs" or "cg"; ``formulation`` "span" (default: the field is spanned by the n basis
    functions and the map is its flow, :func:`span_energy`) or "charged" (free trajectories
    with the charged Nystrom energy; their end points are not the image of the data under the
    learned field); ``whiten`` (span) optimise K_nn(X[I])^1/2 beta instead of beta;
    ``random_state`` seeds the basis choice.

    Attributes: ``embedding_`` (m x b) = first b coordinates of Phi_p in the PCA frame;
    ``trajectories_`` (p + 1, m, r); ``pca_`` (mean, rotation); ``basis_`` (basis point
    indices); ``flow_centres_``, ``flow_coef_`` (p, n, r) the learned velocity field;
    ``energy_``, ``kinetic_energy_``, ``off_subspace_energy_``, ``energy_trace_``,
    ``n_iter_``, ``n_evaluations_``, ``optimizer_message_``.
    """

    def __init__(
        self,
        n_components: int = 2,
        sigma: float = 1.0,
        lam: float = 1.0,
        p: int = 20,
        n_basis: int | None = 300,
        max_iter: int = 1000,
        eps: float = 1.0,
        optimizer: str = "lbfgs",
        formulation: str = "span",
        whiten: bool = True,
        random_state=None,
    ):
        keep_arguments(self, locals())

    def _check_params(self) -> None:
        checks = {
            "n_components": int(self.n_components) == self.n_components and self.n_components >= 1,
            "sigma": np.isfinite(self.sigma) and self.sigma > 0,
            "lam": np.isfinite(self.lam) and self.lam >= 0,
            "p": int(self.p) == self.p and self.p >= 1,
            "n_basis": self.n_basis is None
            or (int(self.n_basis) == self.n_basis and self.n_basis >= 1),
            "max_iter": int(self.max_iter) == self.max_iter and self.max_iter >= 0,
            "eps": np.isfinite(self.eps) and self.eps >= 0,
            "optimizer": self.optimizer in OPTIMIZERS,
            "formulation": self.formulation in FORMULATIONS,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"Diffeomap: invalid {name}={getattr(self, name)!r}")

    def fit(self, X, y=None):
        self._check_params()
        X = points_of(self, X)
        pca = fit_pca_rotation(X)
        Z = pca.apply(X)
        if Z.shape[1] <= self.n_components:
            raise ValueError(
                f"Diffeomap: n_components={self.n_components} must be below the number of "
                f"principal axes of X: {Z.shape[1]} for {X.shape[1]} feature(s) (shape {X.shape})"
            )
        n_basis = None if self.n_basis is None else int(self.n_basis)
        if self.formulation == "span" and n_basis is None:
            basis = None  # every point, repeats included: the span energy inverts nothing
        else:
            basis = select_basis(X, n_basis, np.random.default_rng(self.random_state))
        if self.formulation == "charged" and basis is not None and self.eps <= 0:
            raise ValueError(f"Diffeomap: a reduced set needs eps > 0, got eps={self.eps!r}")
        common = dict(
            n_components=int(self.n_components),
            sigma=float(self.sigma),
            lam=float(self.lam),
            p=int(self.p),
            max_iter=int(self.max_iter),
            optimizer=self.optimizer,
        )
        self.pca_ = pca
        self.basis_ = np.arange(len(X)) if basis is None else basis
        if self.formulation == "span":
            fit = fit_span(Z, basis=self.basis_, whiten=bool(self.whiten), **common)
            self.flow_centres_ = np.stack(
                [fit.trajectories[k][self.basis_] for k in range(int(self.p))]
            )
            self.flow_coef_ = fit.coef
        else:
            fit = fit_trajectories(Z, basis=basis, eps=float(self.eps), **common)
            self.flow_centres_, self.flow_coef_ = velocity_coefficients(
                fit.trajectories, float(self.sigma), basis, float(self.eps)
            )
        self.trajectories_ = fit.trajectories
        return self._store(fit)

    def _store(self, fit: DiffeomapFit):
        self.embedding_ = fit.trajectories[-1][:, : self.n_components].copy()
        self.energy_ = fit.parts.energy
        self.kinetic_energy_ = fit.parts.kinetic
        self.off_subspace_energy_ = fit.parts.off_subspace
        self.energy_trace_ = fit.optimum.energy_trace
        self.n_iter_ = fit.optimum.n_iter
        self.n_evaluations_ = fit.optimum.n_evaluations
        self.optimizer_message_ = fit.optimum.message
        return self

    def fit_transform(self, X, y=None):
        return self.fit(X).embedding_.copy()

    def flow(self, X) -> np.ndarray:
        """phi(x, 1) of new points X (q x a), all r coordinates in the PCA frame."""
        check_is_fitted(self, "flow_coef_")
        Z = self.pca_.apply(points_of(self, X, fitting=False, min_samples=1))
        return integrate_flow(Z, self.flow_centres_, self.flow_coef_, float(self.sigma))

    def inverse_flow(self, Y) -> np.ndarray:
        """The points of the input space whose flow ends at Y (q x r, PCA frame)."""
        check_is_fitted(self, "flow_coef_")
        Y = check_points(Y, "Y", self.flow_coef_.shape[2])
        Z = integrate_flow(Y, self.flow_centres_, self.flow_coef_, float(self.sigma), inverse=True)
        return self.pca_.invert(Z)

    def transform(self, X) -> np.ndarray:
        """First b coordinates of phi(x, 1) for new points X (q x a)."""
        return self.flow(X)[:, : self.n_components]
