"""Diffeomap (Walder & Schoelkopf, NIPS 2008): dimensionality reduction by a diffeomorphic flow.

Input x_j in R^a (j = 1..m) is centred and rotated onto its principal axes (all of them, so
nothing is lost; r = min(a, m - 1) axes). A flow phi(x, t), phi(x, 0) = x,
d phi / dt = v(phi, t), with each component of v(., t) in the RKHS of the Gaussian kernel
k(x, y) = exp(-||x - y||^2 / (2 sigma^2)), is fitted by minimising (paper section 3), with the
time discretised as t_k = k / p and the trajectories Phi_k = phi(X, t_k) (m x r, Phi_0 = X):

    E(Phi_1..Phi_p) = sum_{k<p} (1/p) tr(V_k^T A_k V_k)  +  lam sum_j L(Phi_p[j]),
    V_k = p (Phi_{k+1} - Phi_k),     L(y) = sum_{d > b} y_d^2   (b = n_components).

Output: the first b coordinates of Phi_p. This module holds the estimator, :class:`Diffeomap`,
with the PCA frame and the choice of the basis points; the parts it fits with live by idea:

* :mod:`embedlab.methods.diffeomap_energy`: the energy in its two formulations, ``"span"``
  (the field spanned by n basis functions, the trajectories its shooting) and ``"charged"``
  (free trajectories, the Nystrom energy), and its gradient;
* :mod:`embedlab.methods.diffeomap_fit`: the optimiser (L-BFGS or the paper's nonlinear
  conjugate gradient) run on either;
* :mod:`embedlab.methods.diffeomap_flow`: the fitted flow's map of new points and its inverse.

The names of those modules stay importable from here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from embedlab.checks import check_points
from embedlab.methods.conventions import keep_arguments, points_of
from embedlab.methods.diffeomap_energy import (
    SPAN_PATHS,
    EnergyParts,
    SpanEnergyParts,
    diffeomap_energy,
    is_every_point,
    span_energy,
    span_trajectories,
    velocity_coefficients,
)
from embedlab.methods.diffeomap_fit import (
    LOG_EVERY,
    OPTIMIZERS,
    WHITEN_FLOOR,
    DiffeomapFit,
    Optimum,
    fit_span,
    fit_trajectories,
    whitening,
)
from embedlab.methods.diffeomap_flow import integrate_flow

__all__ = [
    "FORMULATIONS",
    "LOG_EVERY",
    "OPTIMIZERS",
    "SPAN_PATHS",
    "WHITEN_FLOOR",
    "Diffeomap",
    "DiffeomapFit",
    "EnergyParts",
    "Optimum",
    "PCARotation",
    "SpanEnergyParts",
    "diffeomap_energy",
    "fit_pca_rotation",
    "fit_span",
    "fit_trajectories",
    "integrate_flow",
    "is_every_point",
    "select_basis",
    "span_energy",
    "span_trajectories",
    "velocity_coefficients",
    "whitening",
]

#: the energies :class:`Diffeomap` fits (:mod:`embedlab.methods.diffeomap_energy`)
FORMULATIONS = ("span", "charged")


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


# ----------------------------------------------------------------------------- estimator


class Diffeomap(TransformerMixin, BaseEstimator):
    """Diffeomorphic dimensionality reduction (the equations: the module docstrings here and of
    :mod:`embedlab.methods.diffeomap_energy`).

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
