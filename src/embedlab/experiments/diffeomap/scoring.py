"""The paper's criterion: leave-one-out 1-NN errors of a 2-D map among the points with a
class (:func:`.data.prepare`'s classes: one label per point, or a 0/1 incidence where a point
may have several, a hit when the nearest point shares one)."""

from __future__ import annotations

import numpy as np


def class_errors(Y: np.ndarray, classes) -> tuple[int | None, int]:
    """(LOO 1-NN errors among the labelled points (label >= 0), number of labelled points);
    (None, 0) without classes.

    ``classes`` 2-D: a 0/1 incidence, several classes per point (:func:`shared_class_errors`).
    """
    from embedlab.evaluate.knn import loo_1nn_errors

    if classes is None:
        return None, 0
    if classes.ndim == 2:
        return shared_class_errors(Y, classes)
    keep = classes >= 0
    if keep.sum() < 2:
        return None, int(keep.sum())
    return loo_1nn_errors(Y[keep], classes[keep]), int(keep.sum())


def shared_class_errors(Y: np.ndarray, S) -> tuple[int, int]:
    """LOO 1-NN with several classes per point, S the 0/1 incidence (points x classes): among
    the rows with a class, (#rows whose nearest such row shares none of its classes, #rows)."""
    import scipy.sparse as sp
    from sklearn.neighbors import NearestNeighbors

    S = sp.csr_matrix(S, dtype=np.int64)
    keep = np.flatnonzero(np.asarray(S.sum(axis=1)).ravel() > 0)
    if len(keep) < 2:
        raise ValueError(f"shared-class 1-NN needs at least two labelled points, got {len(keep)}")
    _, idx = NearestNeighbors(n_neighbors=2).fit(Y[keep]).kneighbors(Y[keep])
    own = np.arange(len(keep))
    nearest = np.where(idx[:, 0] == own, idx[:, 1], idx[:, 0])
    shared = np.asarray(S[keep].multiply(S[keep][nearest]).sum(axis=1)).ravel()
    return int(np.count_nonzero(shared == 0)), len(keep)
