"""The map of a fitted Diffeomap flow: points forward through its p Euler steps, and back.

The learned velocity field of step k is v_k(x) = sum_i coef[k, i] k(centres[k, i], x), the
Gaussian kernel of width sigma (:func:`embedlab.methods.diffeomap_energy.velocity_coefficients`
gives centres and coefficients of the charged formulation; the span formulation's are its
basis points and beta). New points are mapped by the same forward-Euler scheme that defines
V_k: x_{k+1} = x_k + (1/p) v_k(x_k) (span: exactly the fitted trajectories on the training
data; charged: the field Y, without the residual); the inverse solves x_k + (1/p) v_k(x_k) =
x_{k+1} for k = p-1..0 by Newton's method, started from x_{k+1} - (1/p) v_k(x_{k+1});
recovering the inputs from their images checks that the discrete map is invertible on the
data. (The continuous flow cannot fold; an Euler step with (1/p) Lip(v_k) >= 1 can, and then
Newton finds another preimage or fails with an error.)
"""

from __future__ import annotations

import numpy as np

from embedlab.kernels.diffeomap import gaussian_kernel


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
