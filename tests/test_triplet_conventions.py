"""The estimators that take triplets (GNMDS, CKL, STE, TSTE) or co-occurrences (DCODE), not
points, follow scikit-learn's conventions where they apply: the constructor/parameter checks
of scikit-learn's own suite, ``fit(X, y=None)`` with the extra inputs by keyword, and
scikit-learn's messages for malformed arrays (as cblearn's triplet estimators do). The
suite's data-driven checks need points, which these estimators do not take."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils import estimator_checks as sk
from sklearn.utils.estimator_checks import parametrize_with_checks

from embedlab import CKL, DCODE, GNMDS, STE, TSTE
from embedlab.methods.conventions import keep_arguments, points_of

ESTIMATORS = [GNMDS(), CKL(), STE(), TSTE(), DCODE()]
API_CHECKS = [
    sk.check_parameters_default_constructible,
    sk.check_no_attributes_set_in_init,
    sk.check_get_params_invariance,
    sk.check_set_params,
    sk.check_estimator_repr,
    sk.check_estimator_cloneable,
    sk.check_do_not_raise_errors_in_init_or_set_params,
    sk.check_valid_tag_types,
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("check", API_CHECKS, ids=lambda c: c.__name__)
def test_scikit_learn_api_checks(estimator, check):
    check(type(estimator).__name__, estimator)


def triplets_of(X: np.ndarray, m: int, seed: int = 0) -> np.ndarray:
    """m random triplets (i, j, l) of the points X, each with d_ij < d_il."""
    rng = np.random.default_rng(seed)
    i, j, l = rng.integers(0, len(X), size=(3, 4 * m))
    keep = (i != j) & (i != l) & (j != l)
    i, j, l = i[keep][:m], j[keep][:m], l[keep][:m]
    near = np.linalg.norm(X[i] - X[j], axis=1) < np.linalg.norm(X[i] - X[l], axis=1)
    return np.column_stack([i, np.where(near, j, l), np.where(near, l, j)])


@pytest.mark.parametrize("cls", [GNMDS, CKL, STE, TSTE])
def test_fit_takes_y_and_n_by_keyword(cls):
    X = np.random.default_rng(0).normal(size=(20, 2))
    T = triplets_of(X, 300)
    labels = np.arange(20) % 2
    a = cls(max_iter=30, random_state=0).fit(T, labels)  # y ignored, as scikit-learn's
    b = cls(max_iter=30, random_state=0).fit(T)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    c = clone(a).fit(T, n=25)
    assert c.embedding_.shape[0] == 25


@pytest.mark.parametrize(
    ("triplets", "message"),
    [
        (np.zeros((0, 3), dtype=int), r"Found array with 0 sample\(s\)"),
        (np.arange(3), "Expected 2D array, got 1D array instead"),
        (np.array([[0, 1, np.nan]]), "Input triplets contains NaN"),
        (np.array([[0, 1, 2j]]), "Complex data not supported"),
        (np.array([[0, 1]]), r"triplets must have shape \(m, 3\)"),
        (np.array([[0, 1, 1.5]]), "triplet row 0 has non-integer indices"),
        (np.array([[0, 1, 5]]), r"triplet row 0 has indices \[0, 1, 5\] outside \[0, n\)"),
    ],
)
def test_malformed_triplets_get_scikit_learns_messages(triplets, message):
    with pytest.raises(ValueError, match=message):
        STE().fit(triplets, n=4)


class TripletsOfPoints(BaseEstimator):
    """cblearn's way of running scikit-learn's data-driven checks on a triplet estimator:
    ``fit(X)`` draws triplets from the points' distances (:func:`triplets_of`) and fits a
    clone of ``estimator`` on them. The points are read by the wrapper; what the checks see
    of the estimator is its fit on real triplets: determinism under a seed, pickling,
    read-only and Fortran-ordered input turned into triplets, clone and parameter handling."""

    def __init__(self, estimator=None, n_triplets=100):
        keep_arguments(self, locals())

    def fit(self, X, y=None):
        X = points_of(self, X)
        triplets = triplets_of(X, self.n_triplets)
        self.estimator_ = clone(self.estimator).fit(triplets, n=len(X))
        self.embedding_ = self.estimator_.embedding_
        return self

    def fit_transform(self, X, y=None):
        return self.fit(X).embedding_


@parametrize_with_checks(
    [TripletsOfPoints(cls(max_iter=20, random_state=0)) for cls in (GNMDS, CKL, STE, TSTE)]
)
def test_scikit_learn_checks_through_points(estimator, check):
    check(estimator)
