"""KL(P || Q) of a given neighbour embedding (the SNEST paper's Table 1 measure).

KL = sum_{i != j} p_ij log(p_ij / q_ij) over ordered pairs, with P summing to 1 and
q_ij = w_ij / sum_{k != l} w_kl for the output kernel w (``sne``, ``tsne``, ``snest``; see
:mod:`embedlab.methods.neighbour_kl`). This equals the paper's eq. (8), whose sum over i < j uses
P and Q normalised over unordered pairs. Computed by the exact kernel (O(n^2)).
"""

from __future__ import annotations

import numpy as np

from embedlab.methods.neighbour_affinities import validate_affinities
from embedlab.methods.neighbour_kl import NeighbourKL


def kl_divergence(P, Y: np.ndarray, kernel: str, n_time: int = 0) -> float:
    """KL(P || Q(Y)); the last ``n_time`` columns of ``Y`` are time (SNEST only)."""
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2 or not 0 <= n_time < Y.shape[1]:
        raise ValueError(f"embedding of shape {Y.shape} cannot have n_time={n_time}")
    if not np.isfinite(Y).all():
        raise ValueError("embedding contains NaN or inf")
    if n_time and kernel != "snest":
        raise ValueError(f"output kernel {kernel!r} has no time dimensions (n_time={n_time})")
    Pv = validate_affinities(P)
    if Pv.shape[0] != Y.shape[0]:
        raise ValueError(f"P has {Pv.shape[0]} items but the embedding has {Y.shape[0]} points")
    return NeighbourKL(Pv, kernel, Y.shape[1] - n_time).cost(Y)
