"""Triplet measures: triplet error, k-fold splits over triplets and the held-out split on
which a parameter is chosen (triplet lists are validated by
:func:`embedlab.methods.triplet_solvers.check_triplets`).

A triplet (i, j, l) says "i is more similar to j than to l"; an embedding Y satisfies it
when d_ij < d_il (ties count as violated).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embedlab.kernels.triplets import sq_dists
from embedlab.methods.triplet_solvers import check_triplets


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


def tied_fraction(Y: Any, triplets: Any, *, allow_self: bool = False) -> float:
    """Fraction of triplets (i, j, l) with d_ij = d_il exactly in Y. Under ``ties="correct"``
    these count as satisfied, so a collapsed embedding (every point in one place, every
    triplet tied) scores a triplet error of 0: this number exposes it."""
    trip, _ = check_triplets(triplets, allow_self=allow_self)
    Y = _check_embedding(Y, int(trip.max()) + 1)
    a, b = sq_dists(Y, trip, False)
    return float(np.mean(a == b))


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


def holdout_split(m: int, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit, validation) indices of m training triplets: a seeded ``val_fraction`` held out
    for choosing a parameter (the t-STE paper's protocol), both sorted (generation order)."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction}")
    n_val = int(round(val_fraction * m))
    if n_val < 1 or n_val >= m:
        raise ValueError(f"validation: {val_fraction} of {m} triplets leaves an empty split")
    order = np.random.default_rng(seed).permutation(m)
    return np.sort(order[n_val:]), np.sort(order[:n_val])
