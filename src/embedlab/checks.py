"""Input checks shared by the methods and the affinity builders: point arrays."""

from __future__ import annotations

import numpy as np


def check_points(X, name: str = "X", n_features: int | None = None) -> np.ndarray:
    """X as a float64 (m x a) array; errors name the array and the first bad entry."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (points x features), got {X.shape}")
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN/inf values (first at row {i}, column {j}: "
            f"{X[i, j]})"
        )
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features; the model was fitted on {n_features}")
    return X
