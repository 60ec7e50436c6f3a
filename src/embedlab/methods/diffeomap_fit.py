"""Fitting a Diffeomap flow: the optimiser run on either energy of
:mod:`embedlab.methods.diffeomap_energy`.

Optimiser (``optimizer``): scipy's L-BFGS (default; the better at equal gradient evaluations,
benchmarks/README.md) or nonlinear conjugate gradient (Polak-Ribiere, the paper's), for
``max_iter`` iterations from the identity flow (Phi_k = X, the paper's start). The span
formulation (:func:`fit_span`) optimises the field's coefficients beta, whitened by
K_nn(X[I])^-1/2 by default; the charged one (:func:`fit_trajectories`) the trajectories
Phi_1..Phi_p. Either keeps the lowest energy it evaluated.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from embedlab.kernels.diffeomap import flow_kernel_buffer, gaussian_kernel
from embedlab.methods.diffeomap_energy import (
    EnergyParts,
    SpanEnergyParts,
    diffeomap_energy,
    is_every_point,
    span_energy,
)

log = logging.getLogger(__name__)

#: optimiser iterations between progress lines (energy) in the fit's log
LOG_EVERY = 50


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


#: the ``optimizer`` choices, by scipy's name of the method
OPTIMIZERS = {"lbfgs": "L-BFGS-B", "cg": "CG"}


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
