"""The numerics of the triplet embeddings (:mod:`embedlab.methods.triplets`): the check of a
triplet list, the objectives of the X and K forms, the projections onto the PSD cone, classical
MDS of a kernel and the two descent solvers. numpy, scipy and the numba kernels only, so that a
fit that runs them (:mod:`embedlab.methods.triplet_fit`) starts without scikit-learn.

Objectives (a = d_ij^2, b = d_il^2 per triplet t = (i, j, l); per-triplet losses in
:mod:`embedlab.kernels.triplets`):

* X forms optimise coordinates X (n x dims):  C(X) = sum_t L(a_t, b_t) + lam ||X||_F^2.
* K forms optimise a PSD Gram matrix K (n x n), a = k_ii + k_jj - 2 k_ij:
  C(K) = sum_t L(a_t, b_t) + lam trace(K), by projected gradient descent (projection onto
  the PSD cone by eigen-decomposition after every step). CKL-K keeps k_ii = 1: after the
  PSD projection, K is rescaled to D^-1/2 K D^-1/2 (D = diag K), which stays PSD and has a
  unit diagonal exactly (a rescaling, not the exact Frobenius projection onto the
  intersection of both sets). The embedding is classical MDS of K's distances: the top
  ``n_components`` eigenvectors of the double-centred K, scaled by sqrt(eigenvalue).

Solvers (:data:`SOLVERS`): :func:`adaptive_descent`, van der Maaten's STE code protocol --
plain gradient descent with step ``learning_rate * n / m``, multiplied by 1.01 after a step
that decreased the cost and halved otherwise; stop after 5 steps in a row without decrease or
after ``max_iter`` (1000) iterations; return the best iterate seen. :func:`accelerated_descent`:
the same step rule with Nesterov momentum, restarted on a failed step, stopping when no step
lowers the cost by ``tol`` |C| (relative) -- the same fixed points in fewer projections
(benchmarks/bench_kform.py). The projections take ``precision`` ("float32": the K forms' PSD
projections in single precision).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from embedlab.kernels import triplets as kern

__all__ = [
    "SOLVERS",
    "CoordsObjective",
    "DescentResult",
    "GramObjective",
    "StepRule",
    "accelerated_descent",
    "adaptive_descent",
    "check_triplets",
    "gram_embedding",
    "project_psd",
    "project_psd_released",
    "project_unit_diagonal",
]

# ----------------------------------------------------------------------------- input


def check_triplets(
    triplets: Any, n: int | None = None, allow_self: bool = False
) -> tuple[np.ndarray, int]:
    """Validate a triplet list; return it as a C-contiguous int64 (m, 3) array and n.

    ``triplets`` must be a non-empty (m, 3) array of integer indices (integral floats pass);
    ``n`` (the number of items) defaults to the largest index + 1. Raises ValueError naming
    the first offending row and its values for non-integer, out-of-range (< 0 or >= n) or
    repeated indices within a triplet. ``allow_self`` accepts j = i (self-triplets, drawn by
    the t-STE authors' released rule); i = l and j = l are still errors. The estimators read
    their input by scikit-learn's ``check_array`` before this check, for its messages on
    malformed arrays (:mod:`embedlab.methods.triplets`).
    """
    arr = np.asarray(triplets)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"triplets must have shape (m, 3), got {arr.shape}")
    if len(arr) == 0:
        raise ValueError("triplets must hold at least one triplet, got shape (0, 3)")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError(f"triplet indices must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(f"triplet row {row} has non-integer indices {arr[row].tolist()}")
    out = np.ascontiguousarray(arr, dtype=np.int64)
    if n is None:
        n = int(out.max()) + 1
    n = int(n)
    bad = (out < 0) | (out >= n)
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(
            f"triplet row {row} has indices {out[row].tolist()} outside [0, n) with n = {n}"
        )
    same = (out[:, 0] == out[:, 2]) | (out[:, 1] == out[:, 2])
    if not allow_self:
        same |= out[:, 0] == out[:, 1]
    if same.any():
        row = int(np.flatnonzero(same)[0])
        raise ValueError(f"triplet row {row} repeats an index: {out[row].tolist()}")
    return out, n


# ----------------------------------------------------------------------------- objectives


class CoordsObjective:
    """C(X) = sum_t L(||x_i - x_j||^2, ||x_i - x_l||^2) + lam ||X||_F^2 and dC/dX; L = -log p
    when ``use_log`` (the hinge for GNMDS), else -p (:func:`kern.objective_term`)."""

    def __init__(
        self, loss: int, param: float, lam: float, triplets: np.ndarray, use_log: bool = True
    ):
        self.loss, self.param, self.lam = int(loss), float(param), float(lam)
        self.use_log = bool(use_log)
        self.triplets = np.ascontiguousarray(triplets, dtype=np.int64)

    def __call__(self, X: np.ndarray) -> tuple[float, np.ndarray]:
        cost, G = kern.coords_cost_grad(self.loss, self.param, X, self.triplets, self.use_log)
        cost = float(cost)
        if self.lam:
            cost += self.lam * float(np.sum(X * X))
            G += 2.0 * self.lam * X
        return cost, G


class GramObjective:
    """C(K) = w sum_t L(k_ii + k_jj - k_ij - k_ji, k_ii + k_ll - k_il - k_li) + lam trace(K)
    and dC/dK (each entry of K treated as a free variable; symmetric for symmetric K);
    w = ``loss_weight`` (1 unless a convex weighting of the two terms is wanted); L = -log p
    when ``use_log`` (the hinge for GNMDS), else -p.

    ``one_sided``: the gradient of the authors' released code (the whole derivative of a on
    k_ij, of b on k_il: :func:`kern.gather_grad_gram`). ``trace_in_cost=False``: the cost
    holds lam n instead of lam trace(K) (the released STE-K's regulariser, evaluated on
    exp(-D), whose diagonal is 1), the gradient still lam I.
    """

    def __init__(
        self,
        loss: int,
        param: float,
        lam: float,
        triplets: np.ndarray,
        n: int,
        loss_weight: float = 1.0,
        use_log: bool = True,
        one_sided: bool = False,
        trace_in_cost: bool = True,
    ):
        self.loss, self.param, self.lam, self.n = int(loss), float(param), float(lam), int(n)
        self.loss_weight = float(loss_weight)
        self.use_log, self.one_sided = bool(use_log), bool(one_sided)
        self.trace_in_cost = bool(trace_in_cost)
        self.triplets = np.ascontiguousarray(triplets, dtype=np.int64)
        self.indptr, self.slots = kern.incidence(self.triplets, n)

    def __call__(self, K: np.ndarray) -> tuple[float, np.ndarray]:
        loss, ga, gb = kern.triplet_terms(
            self.loss, self.param, K, self.triplets, True, self.use_log
        )
        w = self.loss_weight
        if w != 1.0:
            ga *= w
            gb *= w
        G = kern.gather_grad_gram(
            self.n, self.triplets, self.indptr, self.slots, ga, gb, self.one_sided
        )
        cost = w * float(np.sum(loss))
        if self.lam:
            cost += self.lam * (float(np.trace(K)) if self.trace_in_cost else self.n)
            G[np.diag_indices(self.n)] += self.lam
        return cost, G


# ------------------------------------------------------------------- PSD cone and embedding


def project_psd(K: np.ndarray, precision: str = "float64") -> np.ndarray:
    """Nearest positive semidefinite matrix in Frobenius norm: V max(w, 0) V^T of sym(K),
    rebuilt from the positive eigenpairs only (the K forms' iterates are low-rank, so the
    product costs O(n^2 rank) rather than O(n^3)).

    ``precision="float32"`` computes the eigen-decomposition (LAPACK syevd) and the product in
    single precision and returns float64: about 1.7x faster at n = 1000
    (benchmarks/bench_kform.py), with entries accurate to ~1e-7 of the largest eigenvalue.
    """
    S = 0.5 * (K + K.T)
    if precision == "float32":
        w, V = scipy.linalg.eigh(
            S.astype(np.float32), driver="evd", overwrite_a=True, check_finite=False
        )
    elif precision == "float64":
        w, V = np.linalg.eigh(S)
    else:
        raise ValueError(f"project_psd: precision must be float32 or float64, got {precision!r}")
    positive = w > 0.0
    Vp = V[:, positive]
    return ((Vp * w[positive]) @ Vp.T).astype(np.float64, copy=False)


def project_psd_released(K: np.ndarray, precision: str = "float64") -> np.ndarray | None:
    """The authors' released projection of a (non-symmetric) matrix: the eigenpairs of the
    general eigenproblem K V = V L (LAPACK geev, as MATLAB's eig), their real parts, and
    Re(V)_+ Re(L)_+ Re(V)_+^T over the eigenvalues with positive real part (a symmetric PSD
    matrix; for a symmetric K the Frobenius projection). None when no eigenvalue is
    positive: the released code stops there. ``precision="float32"``: single-precision geev.
    """
    if precision == "float32":
        A = K.astype(np.float32)
    elif precision == "float64":
        A = np.array(K, dtype=np.float64)
    else:
        raise ValueError(
            f"project_psd_released: precision must be float32 or float64, got {precision!r}"
        )
    w, V = scipy.linalg.eig(A, overwrite_a=True, check_finite=False)
    w = w.real
    positive = w > 0.0
    if not positive.any():
        return None
    Vp = np.ascontiguousarray(V[:, positive].real)
    return ((Vp * w[positive]) @ Vp.T).astype(np.float64, copy=False)


def project_unit_diagonal(K: np.ndarray, precision: str = "float64") -> np.ndarray:
    """PSD projection, then D^-1/2 K D^-1/2: PSD with k_ii = 1 (a zero row gets k_ii = 1)."""
    P = project_psd(K, precision)
    d = np.diag(P).copy()
    empty = d <= 1e-300
    d[empty] = 1.0
    P[empty, empty] = 1.0
    s = 1.0 / np.sqrt(d)
    P = P * s[:, None] * s[None, :]
    P[np.diag_indices(len(P))] = 1.0
    return P


def gram_embedding(K: np.ndarray, n_components: int, centre: bool = True) -> np.ndarray:
    """Classical MDS of a Gram matrix: top eigenvectors of H K H scaled by sqrt(eigenvalue),
    H = I - 11^T / n (keeps every d_ij^2 = k_ii + k_jj - 2 k_ij). ``centre=False`` skips H:
    the top eigenvectors of K itself (its top singular vectors, K being PSD) scaled by
    sqrt(eigenvalue), as the t-STE authors' code does. Each axis' sign is fixed so that its
    largest-magnitude coordinate is positive."""
    n = len(K)
    S = 0.5 * (K + K.T)
    if centre:
        S = S - S.mean(axis=0, keepdims=True)
        S = S - S.mean(axis=1, keepdims=True)
    w, V = np.linalg.eigh(S)
    top = np.argsort(w)[::-1][:n_components]
    Y = V[:, top] * np.sqrt(np.maximum(w[top], 0.0))
    flip = Y[np.abs(Y).argmax(axis=0), np.arange(Y.shape[1])] < 0
    Y[:, flip] *= -1.0
    assert Y.shape == (n, n_components)
    return Y


# ----------------------------------------------------------------------------- optimiser


@dataclass
class DescentResult:
    """Best iterate of :func:`adaptive_descent`, its cost and the cost trace."""

    x: np.ndarray
    cost: float
    n_iter: int
    costs: list[float] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)  # the step eta taken at each iteration


@dataclass(frozen=True)
class StepRule:
    """What both solvers share: van der Maaten's step rule from the first step ``step``
    (eta *= 1.01 after a decrease, eta *= 0.5 otherwise), at most ``max_iter`` iterations,
    a stop after ``patience`` iterations in a row without a decrease; ``name`` labels the
    messages and ``verbose`` prints every 100th iteration."""

    step: float
    max_iter: int = 1000
    patience: int = 5
    name: str = "objective"
    verbose: bool = False

    def __post_init__(self) -> None:
        if not (np.isfinite(self.step) and self.step > 0):
            raise ValueError(f"{self.name}: step must be a positive number, got {self.step}")


def adaptive_descent(
    objective: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    rule: StepRule,
    *,
    tol: float = 1e-7,
    project: Callable[[np.ndarray], np.ndarray | None] | None = None,
    min_iter: int = 0,
    best_after_step: bool = False,
) -> DescentResult:
    """(Projected) gradient descent with van der Maaten's step rule.

    x <- project(x - eta grad C(x)); eta *= 1.01 when C dropped by more than ``tol`` (an
    absolute amount, 1e-7 as in the reference code) since the previous iterate, else
    eta *= 0.5. Stops after ``patience`` consecutive non-decreasing iterations (once at
    least ``min_iter`` iterations ran), after ``max_iter`` iterations, or when ``project``
    returns None (no feasible point: the released K forms' empty PSD projection); returns
    the iterate with the lowest cost -- or, with ``best_after_step``, the iterate that the
    step from it produced (the released CKL-K's record). A non-finite cost or gradient raises
    FloatingPointError.
    """
    step, max_iter, patience, name, verbose = (
        rule.step, rule.max_iter, rule.patience, rule.name, rule.verbose
    )
    x = np.array(x0, dtype=np.float64)
    best_x, best_cost = x, np.inf
    prev = np.inf
    eta = float(step)
    no_decrease = 0
    costs: list[float] = []
    steps: list[float] = []
    it = 0
    for it in range(1, int(max_iter) + 1):
        cost, grad = objective(x)
        if not np.isfinite(cost) or not np.isfinite(grad).all():
            raise FloatingPointError(
                f"{name}: optimisation diverged at iteration {it} (cost {cost}, step {eta:.3g})"
            )
        costs.append(cost)
        improved = cost < best_cost
        if improved and not best_after_step:
            best_x, best_cost = x, cost
        x = x - eta * grad
        steps.append(eta)
        if project is not None:
            x = project(x)
            if x is None:
                break
        if improved and best_after_step:
            best_x, best_cost = x, cost
        if prev > cost + tol:
            eta *= 1.01
            no_decrease = 0
        else:
            eta *= 0.5
            no_decrease += 1
        prev = cost
        if verbose and it % 100 == 0:
            print(f"{name}: iteration {it}, cost {cost:.6g}, step {eta:.3g}", flush=True)
        if no_decrease >= patience and it >= min_iter:
            break
    return DescentResult(x=best_x, cost=float(best_cost), n_iter=it, costs=costs, steps=steps)


def accelerated_descent(
    objective: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    rule: StepRule,
    *,
    rtol: float = 1e-7,
    project: Callable[[np.ndarray], np.ndarray] | None = None,
) -> DescentResult:
    """(Projected) gradient descent with Nesterov momentum (FISTA) and a restart on failure.

    y = x_k + ((t_{k-1} - 1) / t_k) (x_k - x_{k-1}),  x_{k+1} = project(y - eta grad C(y)),
    t_k = (1 + sqrt(1 + 4 t_{k-1}^2)) / 2. A step is accepted when C(x_{k+1}) < C(x_k) -
    ``rtol`` |C(x_k)| (then eta *= 1.01, as in :func:`adaptive_descent`); otherwise x stays,
    the momentum restarts (t = 1, y = x) and eta halves; it restarts as well when the
    extrapolated point y (not projected) lies outside the loss's domain, where the cost or
    gradient is not finite (CKL-K's, whose distances may turn negative there: seen on the MNIST
    paper-text run at iteration 162). Stops after ``patience`` failed steps
    in a row (no step lowers C by rtol any more: converged) or ``max_iter`` iterations. The
    iterates stay feasible and C(x) only decreases, so the fixed points are those of the plain
    projected gradient (the same minimiser on the convex K forms, GNMDS-K and STE-K). One
    projection per iteration, as the plain rule; accepted steps cost a second evaluation of C.
    """
    step, max_iter, patience, name, verbose = (
        rule.step, rule.max_iter, rule.patience, rule.name, rule.verbose
    )

    def evaluate(z, it, extrapolated=False):
        cost, grad = objective(z)
        if not np.isfinite(cost) or not np.isfinite(grad).all():
            if extrapolated:  # y left the loss's domain: the caller drops the momentum
                return None
            raise FloatingPointError(
                f"{name}: optimisation diverged at iteration {it} (cost {cost}, step {eta:.3g})"
            )
        return cost, grad

    eta = float(step)
    x = np.array(x0, dtype=np.float64)
    cost_x, grad_x = evaluate(x, 0)
    y, grad_y = x, grad_x
    t = 1.0
    failures = 0
    costs: list[float] = []
    steps: list[float] = []
    it = 0
    for it in range(1, int(max_iter) + 1):
        x_new = y - eta * grad_y
        if project is not None:
            x_new = project(x_new)
        cost_new, grad_new = evaluate(x_new, it)
        steps.append(eta)
        if cost_new < cost_x - rtol * abs(cost_x):
            t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            beta = (t - 1.0) / t_next
            y = x_new + beta * (x_new - x) if beta > 0 else x_new
            x, cost_x, grad_x, t = x_new, cost_new, grad_new, t_next
            at_y = evaluate(y, it, extrapolated=True) if beta > 0 else (cost_x, grad_x)
            if at_y is None:  # restart the momentum from the accepted iterate
                y, grad_y, t = x, grad_x, 1.0
            else:
                grad_y = at_y[1]
            eta *= 1.01
            failures = 0
        else:
            y, grad_y, t = x, grad_x, 1.0
            eta *= 0.5
            failures += 1
        costs.append(cost_x)
        if verbose and it % 100 == 0:
            print(f"{name}: iteration {it}, cost {cost_x:.6g}, step {eta:.3g}", flush=True)
        if failures >= patience:
            break
    return DescentResult(x=x, cost=float(cost_x), n_iter=it, costs=costs, steps=steps)


SOLVERS = {"adaptive": adaptive_descent, "accelerated": accelerated_descent}
