"""Triplet measures: validation of triplet lists, triplet error, k-fold splits over triplets,
and the choice of a parameter on held-out training triplets.

A triplet (i, j, l) says "i is more similar to j than to l"; an embedding Y satisfies it
when d_ij < d_il (ties count as violated).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from embedlab.kernels.triplets import sq_dists


def check_triplets(
    triplets: Any, n: int | None = None, allow_self: bool = False
) -> tuple[np.ndarray, int]:
    """Validate a triplet list; return it as a C-contiguous int64 (m, 3) array and n.

    ``n`` (the number of items) defaults to the largest index + 1. Raises ValueError naming
    the first offending row and its values for non-integer, out-of-range (< 0 or >= n) or
    repeated indices within a triplet. ``allow_self`` accepts j = i (self-triplets, drawn by
    the t-STE authors' released rule); i = l and j = l are still errors.
    """
    arr = np.asarray(triplets)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"triplets must have shape (m, 3), got {arr.shape}")
    if len(arr) == 0:
        raise ValueError("triplets is empty: need at least one triplet")
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


def _check_embedding(Y: Any, n: int) -> np.ndarray:
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    if Y.ndim != 2:
        raise ValueError(f"embedding must be 2-D (n x dims), got shape {Y.shape}")
    if len(Y) < n:
        raise ValueError(f"embedding has {len(Y)} rows but the triplets index up to {n - 1}")
    if not np.isfinite(Y).all():
        raise ValueError("embedding contains NaN or inf")
    return Y


def triplet_violations(
    Y: Any, triplets: Any, *, allow_self: bool = False, ties: str = "violated", gram: bool = False
) -> np.ndarray:
    """Boolean per triplet: True where d_ij >= d_il in Y (the triplet is not satisfied);
    ``ties="correct"`` counts only d_ij > d_il (the t-STE authors' code). ``gram``: Y is a
    Gram matrix K and d^2 = k_ii + k_jj - 2 k_ij."""
    if ties not in ("violated", "correct"):
        raise ValueError(f"ties must be 'violated' or 'correct', got {ties!r}")
    trip, _ = check_triplets(triplets, allow_self=allow_self)
    Y = _check_embedding(Y, int(trip.max()) + 1)
    a, b = sq_dists(Y, trip, gram)
    return a > b if ties == "correct" else a >= b


def triplet_error(
    Y: Any, triplets: Any, *, allow_self: bool = False, ties: str = "violated", gram: bool = False
) -> float:
    """Fraction of triplets (i, j, l) that Y violates: #{d_ij >= d_il} / m (see
    :func:`triplet_violations` for the options)."""
    return float(
        np.mean(triplet_violations(Y, triplets, allow_self=allow_self, ties=ties, gram=gram))
    )


def kfold_triplets(m: int, n_folds: int = 10, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_folds`` (train, test) index splits of m triplets: a seeded permutation cut into
    near-equal folds; each triplet is in exactly one test fold."""
    m, n_folds = int(m), int(n_folds)
    if n_folds < 2:
        raise ValueError(f"n_folds must be at least 2, got {n_folds}")
    if m < n_folds:
        raise ValueError(f"cannot split {m} triplets into {n_folds} folds")
    order = np.random.default_rng(seed).permutation(m)
    folds = np.array_split(order, n_folds)
    return [
        (np.sort(np.concatenate(folds[:k] + folds[k + 1 :])), np.sort(folds[k]))
        for k in range(n_folds)
    ]


def select_by_validation(
    make_estimator: Callable[[Any], Any],
    grid: Sequence[Any],
    train_triplets: Any,
    n: int | None = None,
    val_fraction: float = 0.1,
    seed: int = 0,
) -> tuple[Any, np.ndarray]:
    """Choose a parameter value on held-out training triplets.

    A seeded ``val_fraction`` of ``train_triplets`` is held out; for each value v in ``grid``,
    ``make_estimator(v).fit(rest, n=n)`` is scored by its triplet error on the held-out part.
    Returns (the value with the lowest validation error -- the first on ties, and the
    validation errors in grid order).
    """
    trip, n = check_triplets(train_triplets, n)
    grid = list(grid)
    if not grid:
        raise ValueError("grid is empty")
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction}")
    n_val = int(round(val_fraction * len(trip)))
    if n_val < 1 or n_val >= len(trip):
        raise ValueError(
            f"val_fraction {val_fraction} of {len(trip)} triplets leaves an empty split"
        )
    order = np.random.default_rng(seed).permutation(len(trip))
    val, fit = trip[np.sort(order[:n_val])], trip[np.sort(order[n_val:])]
    errors = np.empty(len(grid))
    for k, value in enumerate(grid):
        est = make_estimator(value).fit(fit, n=n)
        errors[k] = triplet_error(est.embedding_, val)
    return grid[int(np.argmin(errors))], errors
