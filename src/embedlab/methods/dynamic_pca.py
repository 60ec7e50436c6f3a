"""Dynamic PCA: the D-CODE paper's baseline (section 4.1), a random-walk PCA over time windows.

At step t the counts of the last ``window`` steps are averaged into ``C`` (authors x words); it
weights a bipartite graph over authors and words with adjacency ``B = [[0, C], [C^T, 0]]`` and
degrees ``D``. ``M = eps I + (1 - eps) D^{-1} B`` is a lazy random walk (stay with probability
``eps``); its symmetric form ``N = D^{1/2} M D^{-1/2} = eps I + (1 - eps) D^{-1/2} B D^{-1/2}``
has the same spectrum, and ``N^p`` describes ``p``-step walks. The embedding is the top ``k``
eigenvectors of ``N`` after the first, scaled by their eigenvalues to the power ``p/2`` (so
that ``Y Y^T`` approximates ``N^p`` on those directions). Each step is rotated onto the previous
one by orthogonal Procrustes (scipy.linalg.orthogonal_procrustes).

Nodes without any count in a window have no walk; their rows of ``D^{-1/2} B D^{-1/2}`` are
zero (eigenvalue ``eps``), so they sit at the origin.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from embedlab.methods.cooccurrence import check_counts, log_word_given_author


def random_walk_embedding(C: np.ndarray, n_components: int, epsilon: float, walk_steps: int):
    """Embedding (A+W, k) of the author-word graph weighted by ``C`` and its eigenvalues (k,)."""
    A, W = C.shape
    B = np.zeros((A + W, A + W))
    B[:A, A:] = C
    B[A:, :A] = C.T
    degree = B.sum(axis=1)
    inv_sqrt = np.divide(1.0, np.sqrt(degree), out=np.zeros_like(degree), where=degree > 0)
    N = epsilon * np.eye(A + W) + (1.0 - epsilon) * (inv_sqrt[:, None] * B * inv_sqrt[None, :])
    # the full spectrum by divide and conquer: the subset driver (evr) fails with "Internal
    # Error" on some window-averaged NIPS graphs, and n = A + W is a few hundred at most
    values, vectors = scipy.linalg.eigh(0.5 * (N + N.T), driver="evd")
    order = np.argsort(values)[::-1][1 : n_components + 1]  # drop the stationary eigenvector
    values, vectors = values[order], vectors[:, order]
    scale = np.maximum(values, 0.0) ** (0.5 * walk_steps)
    return vectors * scale, values


class DynamicPCA(BaseEstimator):
    """Random-walk PCA of windowed co-occurrence counts, Procrustes-aligned over time.

    Parameters: ``n_components`` (k), ``window`` (steps averaged, the paper: 4; the first
    steps average the steps available so far), ``epsilon`` (probability of staying at a node),
    ``walk_steps`` (p). The extracted text scales by eigenvalues "raised to powers of k/2";
    ``p/2`` is used, the power that makes ``Y Y^T`` the rank-k part of ``N^p``.

    Attributes: ``embeddings_`` (T, A+W, k) authors then words; ``eigenvalues_`` (T, k);
    ``word_marginals_`` (T, W) word marginals of each step's own counts; ``embedding_`` the
    last step.
    """

    def __init__(
        self, n_components: int = 2, window: int = 4, epsilon: float = 0.5, walk_steps: int = 2
    ):
        self.n_components = n_components
        self.window = window
        self.epsilon = epsilon
        self.walk_steps = walk_steps

    def fit(self, counts, y=None) -> DynamicPCA:
        """Embed every step of ``counts`` (list of T (A x W) matrices)."""
        counts = check_counts(counts)
        if int(self.window) < 1:
            raise ValueError(f"window must be >= 1, got {self.window!r}")
        if not 0.0 <= self.epsilon < 1.0:
            raise ValueError(f"epsilon must lie in [0, 1), got {self.epsilon!r}")
        if int(self.walk_steps) < 1:
            raise ValueError(f"walk_steps must be >= 1, got {self.walk_steps!r}")
        A, W = counts[0].shape
        k = int(self.n_components)
        if not 1 <= k < A + W - 1:
            raise ValueError(f"n_components must lie in [1, {A + W - 1}), got {k}")
        T = len(counts)
        self.embeddings_ = np.empty((T, A + W, k))
        self.eigenvalues_ = np.empty((T, k))
        self.word_marginals_ = np.zeros((T, W))
        for t in range(T):
            window = counts[max(0, t - int(self.window) + 1) : t + 1]
            C = np.mean(window, axis=0)
            if C.sum() == 0:
                raise ValueError(f"counts: window ending at step {t} has no counts")
            Y, self.eigenvalues_[t] = random_walk_embedding(C, k, self.epsilon, self.walk_steps)
            if t > 0:
                rotation, _ = scipy.linalg.orthogonal_procrustes(Y, self.embeddings_[t - 1])
                Y = Y @ rotation
            self.embeddings_[t] = Y
            total = counts[t].sum()
            if total > 0:
                self.word_marginals_[t] = counts[t].sum(axis=0) / total
        self.n_authors_ = A
        self.embedding_ = self.embeddings_[-1]
        return self

    def fit_transform(self, counts, y=None) -> np.ndarray:
        return self.fit(counts).embedding_

    def log_word_given_author(self, t: int = -1, p_words: np.ndarray | None = None):
        """``log p(w | a)`` (A, W) from eq. (1) at the step-t positions (point estimates)."""
        check_is_fitted(self, "embeddings_")
        Y, A = self.embeddings_[t], self.n_authors_
        p_words = self.word_marginals_[t] if p_words is None else p_words
        return log_word_given_author(Y[:A], Y[A:], p_words)
