"""Triplet embeddings: GNMDS, CKL, STE (X and K forms) and t-STE (X form), as scikit-learn
estimators.

X forms optimise coordinates X (n x dims): C(X) = sum_t L(a_t, b_t) + lam ||X||_F^2 (a = d_ij^2,
b = d_il^2 per triplet t = (i, j, l)); K forms a PSD Gram matrix K (n x n): C(K) = sum_t
L(a_t, b_t) + lam trace(K), by projected gradient descent, the embedding read off K by classical
MDS. The objectives, PSD projections and solvers are :mod:`embedlab.methods.triplet_solvers`,
each method's options and fit :mod:`embedlab.methods.triplet_fit` (no scikit-learn there: the
workflow's t-STE jobs fit those classes); the estimators here extend them with scikit-learn's
conventions and input checks. The solvers' public names are importable from here too.

Optimiser (``solver``): ``"adaptive"`` (:func:`adaptive_descent`, van der Maaten's STE code
protocol: step ``learning_rate * n / m``, x 1.01 after a decrease, halved otherwise, the best
iterate after 5 steps without decrease or ``max_iter`` (1000) iterations) or ``"accelerated"``
(:func:`accelerated_descent`, the same step rule with Nesterov momentum and a relative ``tol``).
``precision`` ("float32") computes the K forms' PSD projections in single precision.
X forms start from N(0, 1e-4^2), K forms from K = Y Y^T with Y ~ N(0, 0.1^2) (n x dims, or
n x ``init_rank``).

STE and t-STE maximise sum_t log p_t (``use_log=True``, the paper's objective) or the sum of
probabilities sum_t p_t (``use_log=False``, an option of the authors' released code).

The t-STE authors' released code weighs the K forms' terms differently; the estimators express
it with ``loss_weight`` (w) and ``lam``: C(K) = w sum_t L + lam trace(K). Their GNMDS-K is
w = mu, lam = 1 - mu; their STE-K w = 1 - lambda, lam = lambda; their CKL-K keeps only the PSD
projection (``unit_diagonal=False``); their K forms start at rank 2 (``init_rank=2``).
``kform="released"`` runs a K form as that code does (``kform="symmetric"``, the default, is
the exact projected gradient of C(K) above):

* the gradient puts the derivative of a = k_ii + k_jj - 2 k_ij on k_ij alone (-2 L_a; k_ji
  gets nothing), a non-symmetric matrix; the step's result is projected by the eigenpairs
  of the general (non-symmetric) eigenproblem, their real parts, keeping the positive
  eigenvalues: K = Re(V)_+ Re(L)_+ Re(V)_+^T (:func:`project_psd_released`);
* a projection that finds no positive eigenvalue ends the descent, which returns the best
  iterate so far;
* STE-K: the code evaluates its regulariser on exp(-D) instead of K, and trace(exp(-D)) = n:
  the cost (hence the step rule and the best iterate) sees lam n, a constant, while the
  gradient keeps lam I;
* CKL-K: the best iterate is recorded after the step that follows its cost's evaluation
  (the iterate one step later than the one with the lowest cost).

GNMDS's ``min_iter`` (50 in the released X form) keeps the descent going for at least that
many iterations whatever the step rule says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from embedlab.kernels import triplets as kern
from embedlab.methods import triplet_fit, triplet_solvers
from embedlab.methods.triplet_solvers import *  # noqa: F403  (its public names, from here too)
from embedlab.methods.triplet_solvers import check_triplets

__all__ = ["CKL", "GNMDS", "METHODS", "STE", "TSTE", *triplet_solvers.__all__]


def _read_triplets(triplets: Any) -> np.ndarray:
    """``triplets`` as an array read by scikit-learn's ``check_array`` (2-D, non-empty,
    finite, not complex, not sparse: its messages); :func:`check_triplets` checks the rest."""
    return check_array(triplets, dtype=None, input_name="triplets")


class _TripletEmbedding(BaseEstimator, triplet_fit.TripletFit):
    """Shared fit/score of the triplet estimators: scikit-learn's input checks around the fit
    of :class:`embedlab.methods.triplet_fit.TripletFit`, whose subclasses hold each method's
    options."""

    def fit(
        self, triplets: Any, y: Any = None, *, n: int | None = None, allow_self: bool = False
    ) -> _TripletEmbedding:
        """Embed the items of ``triplets`` ((m, 3) ints; ``y`` is ignored, as scikit-learn's
        ``fit(X, y=None)``; by keyword: n = number of items, default largest index + 1;
        ``allow_self`` accepts j = i). Sets ``embedding_`` (n x n_components), ``cost_``,
        ``n_iter_``, ``cost_history_``, ``step_history_`` and, for K forms, ``kernel_``."""
        return super().fit(_read_triplets(triplets), n=n, allow_self=allow_self)

    def fit_transform(
        self, triplets: Any, y: Any = None, *, n: int | None = None, allow_self: bool = False
    ) -> np.ndarray:
        """Fit (as :meth:`fit`) and return ``embedding_``."""
        return self.fit(triplets, y, n=n, allow_self=allow_self).embedding_

    def score(self, triplets: Any) -> float:
        """Fraction of ``triplets`` that ``embedding_`` satisfies (d_ij < d_il)."""
        check_is_fitted(self, "embedding_")
        trip, _ = check_triplets(_read_triplets(triplets), len(self.embedding_))
        a, b = kern.sq_dists(np.ascontiguousarray(self.embedding_, dtype=np.float64), trip, False)
        return float(np.mean(a < b))


class GNMDS(_TripletEmbedding, triplet_fit.GNMDS):
    """Generalised non-metric MDS: hinge loss max(0, 1 + d_ij^2 - d_il^2).

    form="X": + lam ||X||^2 (van der Maaten's default lam = 0); form="K": + lam trace(K),
    the hinge sum weighted by ``loss_weight``. ``kform="released"``: the K form as the authors'
    code runs it (module docstring); ``min_iter``: iterations before the step rule may stop.
    """


class CKL(_TripletEmbedding, triplet_fit.CKL):
    """Crowd kernel learning: minimise -sum log p, p = (d_il^2 + mu) / (d_ij^2 + d_il^2 + 2 mu).

    form="X": + lam ||X||^2; form="K": K PSD with k_ii = 1 (lam must be 0: trace(K) = n);
    ``unit_diagonal=False`` keeps only the PSD projection (the t-STE authors' CKL-K);
    ``kform="released"`` (with ``unit_diagonal=False``): the K form as their code runs it.
    """


class STE(_TripletEmbedding, triplet_fit.STE):
    """Stochastic triplet embedding: maximise sum log p (``use_log``, the paper's objective)
    or sum p, p = exp(-d_ij^2) / (exp(-d_ij^2) + exp(-d_il^2)).

    form="X": + lam ||X||^2; form="K": + lam trace(K) (convex in K with ``use_log``), the
    likelihood term weighted by ``loss_weight``; ``kform="released"``: the K form as the
    authors' code runs it (module docstring).
    """


class TSTE(_TripletEmbedding, triplet_fit.TSTE):
    """t-distributed STE (X form only): maximise sum log p (``use_log``, the paper's
    objective) or sum p with the Student-t kernel q(d^2) = (1 + d^2 / alpha)^(-(alpha + 1) / 2),
    p = q(d_ij^2) / (q(d_ij^2) + q(d_il^2)); alpha = None means n_components - 1 (1 for two
    dimensions). + lam ||X||^2."""


METHODS: dict[str, Callable[..., _TripletEmbedding]] = triplet_fit.by_paper_name(
    {"GNMDS": GNMDS, "CKL": CKL, "STE": STE, "t-STE": TSTE}
)
"""The seven methods of the paper's Fig. 2, by the paper's names."""
