"""LLE baseline of the D-CODE paper (section 4.1): embed authors from their word usage.

LLE cannot embed authors and words jointly from counts, so (as in Mei & Shelton, 2006, cited by
the paper) authors are compared through the words they use: each author is represented by
``sqrt(p(w | a))``, whose Euclidean distances are the Hellinger distances between the authors'
word distributions. scikit-learn's LocallyLinearEmbedding (dense eigensolver) embeds those
vectors. Words are then placed at the mean of their users, ``psi_j = sum_i p(a_i | w_j) phi_i``
(words nobody used at the centroid of the authors), so eq. (1) gives ``p(w | a)``. Like the
static D-CODE variants, only the last count matrix (year T-1) is embedded.

LLE "sometimes returns degenerate embeddings" (the paper reports only the other cases):
:func:`degeneracy` detects them and the estimator raises :class:`DegenerateEmbeddingError`
(or warns, with ``on_degenerate="warn"``) instead of using one silently.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.manifold import LocallyLinearEmbedding
from sklearn.utils.validation import check_is_fitted

from embedlab.methods.cooccurrence import check_counts, log_word_given_author


class DegenerateEmbeddingError(RuntimeError):
    """LLE returned a degenerate embedding (message says which test failed)."""


def degeneracy(Y: np.ndarray, tol: float = 1e-3) -> str | None:
    """Why the point set ``Y`` (n x k) is degenerate, or None.

    Degenerate: non-finite values; a collapsed dimension (smallest / largest singular value of
    the centred points below ``tol``); or more than half of the points coinciding with another
    point (nearest-neighbour distance below ``tol`` times the RMS radius).
    """
    if not np.isfinite(Y).all():
        return "non-finite coordinates"
    centred = Y - Y.mean(axis=0)
    s = np.linalg.svd(centred, compute_uv=False)
    if s[0] == 0 or s[-1] / s[0] < tol:
        return f"collapsed dimension (singular values {np.array2string(s, precision=3)})"
    radius = np.sqrt((centred**2).sum(axis=1).mean())
    d = np.sqrt(((Y[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1))
    np.fill_diagonal(d, np.inf)
    coincide = int(np.count_nonzero(d.min(axis=1) < tol * radius))
    if coincide > len(Y) // 2:
        return f"{coincide} of {len(Y)} points coincide with another point"
    return None


class CooccurrenceLLE(BaseEstimator):
    """LLE of the authors' word-usage vectors of the last count matrix; words at their users' mean.

    Attributes: ``embedding_`` (A+W, k) authors then words; ``word_marginals_`` (W,);
    ``degenerate_`` (bool) and ``degeneracy_`` (reason or None).
    """

    def __init__(
        self,
        n_components: int = 2,
        n_neighbors: int = 8,
        reg: float = 1e-3,
        degenerate_tol: float = 1e-3,
        on_degenerate: str = "raise",
        random_state=None,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.reg = reg
        self.degenerate_tol = degenerate_tol
        self.on_degenerate = on_degenerate
        self.random_state = random_state

    def fit(self, counts, y=None) -> CooccurrenceLLE:
        """Embed the last matrix of ``counts`` (one (A x W) matrix or a list of them)."""
        if self.on_degenerate not in ("raise", "warn"):
            raise ValueError(f"on_degenerate must be 'raise' or 'warn', not {self.on_degenerate!r}")
        C = check_counts(counts)[-1]
        A, W = C.shape
        row = C.sum(axis=1)
        empty = np.flatnonzero(row == 0)
        if empty.size:
            raise ValueError(
                f"counts[-1]: {empty.size} authors have no counts (first: author {empty[0]}); "
                "LLE cannot place them -- drop them or choose authors active in that step"
            )
        if not 0 < int(self.n_neighbors) < A:
            raise ValueError(f"n_neighbors must lie in [1, {A}) for {A} authors")
        features = np.sqrt(C / row[:, None])
        lle = LocallyLinearEmbedding(
            n_neighbors=int(self.n_neighbors),
            n_components=int(self.n_components),
            reg=self.reg,
            eigen_solver="dense",
            random_state=self.random_state,
        )
        authors = lle.fit_transform(features)
        self.degeneracy_ = degeneracy(authors, self.degenerate_tol)
        self.degenerate_ = self.degeneracy_ is not None
        if self.degenerate_:
            message = f"LLE embedding of {A} authors is degenerate: {self.degeneracy_}"
            if self.on_degenerate == "raise":
                raise DegenerateEmbeddingError(message)
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        col = C.sum(axis=0)
        users = np.divide(C, col[None, :], out=np.zeros_like(C), where=col[None, :] > 0)
        words = users.T @ authors
        words[col == 0] = authors.mean(axis=0)
        self.embedding_ = np.vstack([authors, words])
        self.word_marginals_ = col / col.sum()
        self.n_authors_ = A
        return self

    def fit_transform(self, counts, y=None) -> np.ndarray:
        return self.fit(counts).embedding_

    def log_word_given_author(self, t: int = -1, p_words: np.ndarray | None = None):
        """``log p(w | a)`` (A, W) from eq. (1) at the embedded positions (one step: t = -1)."""
        check_is_fitted(self, "embedding_")
        if t not in (0, -1):
            raise IndexError(f"the LLE baseline embeds a single step; t={t} is out of range")
        A = self.n_authors_
        p_words = self.word_marginals_ if p_words is None else p_words
        return log_word_given_author(self.embedding_[:A], self.embedding_[A:], p_words)
