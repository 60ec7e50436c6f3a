"""Input affinities: turn raw association weights into a joint distribution P over pairs."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class AffinityError(ValueError):
    """The weights cannot be turned into a valid P (empty rows, negative or non-finite values)."""


def row_normalised_symmetric(W, name: str = "W") -> sp.csr_matrix:
    """P_ij proportional to W_ij / sum_k W_ik + W_ji / sum_k W_jk, normalised to sum 1.

    This is the SNEST paper's input for co-authorship (W = C, symmetric counts, so the
    second term is C_ij / sum_k C_kj) and for word association (W = WS, asymmetric).
    The diagonal of ``W`` is ignored. Raises :class:`AffinityError` naming the first empty
    row: an item without any association cannot be embedded by a neighbour embedding.
    """
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise AffinityError(f"{name}: must be square, got shape {W.shape}")
    if W.nnz and not np.isfinite(W.data).all():
        raise AffinityError(f"{name}: contains NaN or inf")
    if W.nnz and (W.data < 0).any():
        raise AffinityError(f"{name}: contains negative weights")
    W = W - sp.diags(W.diagonal())
    W.eliminate_zeros()
    out_sums = np.asarray(W.sum(axis=1)).ravel()
    in_sums = np.asarray(W.sum(axis=0)).ravel()
    empty = np.flatnonzero((out_sums == 0) & (in_sums == 0))
    if empty.size:
        raise AffinityError(
            f"{name}: {empty.size} items have no association (first: index {int(empty[0])}); "
            "drop them before computing P"
        )
    inv = np.divide(1.0, out_sums, out=np.zeros_like(out_sums), where=out_sums > 0)
    R = sp.diags(inv) @ W
    P = (R + R.T).tocsr()
    P.sum_duplicates()
    P.sort_indices()
    P.data /= P.data.sum()
    return P


def drop_isolated(C: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """Remove rows/columns without an off-diagonal entry; return (C_kept, kept_indices)."""
    C = sp.csr_matrix(C)
    off = C - sp.diags(C.diagonal())
    off.eliminate_zeros()
    degree = np.diff(off.indptr) + np.diff(off.tocsc().indptr)
    keep = np.flatnonzero(degree > 0)
    return C[keep][:, keep].tocsr(), keep
