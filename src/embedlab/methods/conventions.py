"""What every estimator of embedlab shares with scikit-learn's estimators.

* The constructor only stores its arguments, each under its own name (scikit-learn's
  contract: ``get_params`` reads them back by the signature's names, ``clone`` and
  ``set_params`` rely on it); all checking happens in ``fit`` (:func:`keep_arguments`).
* ``fit`` reads its input through scikit-learn's own ``validate_data``, so that the messages
  for empty, one-sample, complex, non-finite or sparse input are the ones scikit-learn users
  know, and ``n_features_in_`` / ``feature_names_in_`` are set as theirs are
  (:func:`points_of`, :func:`pairwise_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from embedlab.checks import check_points

# scikit-learn is imported by the functions that read input with it: a class that only keeps
# its arguments (the plain triplet fits, methods.triplet_fit) loads without it

#: the locals of an ``__init__`` that are not its arguments
_NOT_ARGUMENTS = ("self", "__class__")


def keep_arguments(estimator, arguments: Mapping[str, Any]) -> None:
    """Store each constructor argument of ``estimator`` under its own name: call it as
    ``keep_arguments(self, locals())`` as the first and only statement of ``__init__``."""
    for name, value in arguments.items():
        if name not in _NOT_ARGUMENTS:
            setattr(estimator, name, value)


def points_of(estimator, X, *, fitting: bool = True, min_samples: int = 2) -> np.ndarray:
    """The points ``X`` (n x D) as a float64 array, checked by scikit-learn's
    ``validate_data`` (2-D, real, at least ``min_samples`` rows and one column), then for
    NaN/inf by :func:`embedlab.checks.check_points`, whose message names the first bad entry;
    ``fitting``: set ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame), else
    check ``X`` against them."""
    from sklearn.utils.validation import validate_data

    X = validate_data(
        estimator,
        X,
        dtype=np.float64,
        ensure_min_samples=min_samples,
        ensure_all_finite=False,
        reset=fitting,
    )
    return check_points(X)


def pairwise_of(estimator, X):
    """A square matrix over the items (an affinity matrix P, dense or scipy sparse) checked
    by ``validate_data`` as :func:`points_of` checks points; sparse input stays sparse.
    Finiteness, squareness and the matrix's own rules are the caller's to check (with
    messages that name the row)."""
    from sklearn.utils.validation import validate_data

    return validate_data(
        estimator,
        X,
        accept_sparse=["csr", "csc", "coo"],
        dtype=np.float64,
        ensure_min_samples=2,
        ensure_all_finite=False,
    )
