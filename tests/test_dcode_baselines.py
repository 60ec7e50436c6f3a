"""D-CODE's baselines: Dynamic PCA (random walk over windows, Procrustes) and LLE."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from embedlab.methods.cooc_lle import CooccurrenceLLE, DegenerateEmbeddingError, degeneracy
from embedlab.methods.dynamic_pca import DynamicPCA, random_walk_embedding


def two_topics(seed=0, A=8, W=10, strong=8.0, weak=0.5):
    """Authors 0..A/2-1 use words 0..W/2-1 a lot, the others the other half (Poisson)."""
    rng = np.random.default_rng(seed)
    rate = np.full((A, W), weak)
    rate[: A // 2, : W // 2] = strong
    rate[A // 2 :, W // 2 :] = strong
    return rng.poisson(rate).astype(float)


def _symmetric_walk(C, epsilon):
    A, W = C.shape
    B = np.block([[np.zeros((A, A)), C], [C.T, np.zeros((W, W))]])
    d = B.sum(axis=1)
    return epsilon * np.eye(A + W) + (1 - epsilon) * B / np.sqrt(np.outer(d, d)), d


# ------------------------------------------------------------------ Dynamic PCA


def test_random_walk_embedding_is_scaled_eigenvectors_of_N():
    C = two_topics()
    eps, p = 0.3, 3
    Y, values = random_walk_embedding(C, 2, eps, p)
    N, d = _symmetric_walk(C, eps)
    all_values = np.sort(np.linalg.eigvalsh(N))[::-1]
    assert np.allclose(values, all_values[1:3])  # the top one (eigenvalue 1) is dropped
    assert all_values[0] == pytest.approx(1.0)
    vectors = Y / values ** (p / 2)
    assert np.allclose(N @ vectors, vectors * values, atol=1e-10)
    assert np.allclose(np.linalg.norm(vectors, axis=0), 1.0)
    # orthogonal to the dropped stationary direction D^{1/2} 1
    assert np.abs(np.sqrt(d) @ vectors).max() < 1e-10
    # p only rescales: coordinates scale by lambda^{p/2}
    Y1, _ = random_walk_embedding(C, 2, eps, 1)
    assert np.allclose(np.abs(Y), np.abs(Y1) * values ** ((p - 1) / 2))


def test_random_walk_embedding_separates_two_topics():
    C = two_topics(seed=1)
    Y, _ = random_walk_embedding(C, 2, 0.5, 2)
    A, W = C.shape
    first = Y[:, 0]
    group = np.r_[np.arange(A) < A // 2, np.arange(W) < W // 2]
    # authors and the words of their topic share the sign of the first coordinate
    assert np.all(np.sign(first[group]) == np.sign(first[group][0]))
    assert np.all(np.sign(first[~group]) == -np.sign(first[group][0]))


def test_isolated_nodes_sit_at_the_origin():
    C = two_topics(seed=2)
    C[0] = 0.0
    Y, _ = random_walk_embedding(C, 2, 0.5, 2)
    assert np.allclose(Y[0], 0.0)


def test_dynamic_pca_windows_and_procrustes_alignment():
    rng = np.random.default_rng(3)
    counts = [two_topics(seed=s) for s in range(6)]
    model = DynamicPCA(window=3, epsilon=0.4, walk_steps=2).fit([sp.csr_matrix(c) for c in counts])
    assert model.embeddings_.shape == (6, 18, 2)
    for t in range(6):
        window = np.mean(counts[max(0, t - 2) : t + 1], axis=0)
        Y, values = random_walk_embedding(window, 2, 0.4, 2)
        # same configuration up to an orthogonal map: equal Gram matrices
        assert np.allclose(model.embeddings_[t] @ model.embeddings_[t].T, Y @ Y.T, atol=1e-10)
        assert np.allclose(model.eigenvalues_[t], values)
    # the alignment is the best rotation onto the previous step
    for t in range(1, 6):
        prev, cur = model.embeddings_[t - 1], model.embeddings_[t]
        for _ in range(20):
            angle = rng.uniform(-0.3, 0.3)
            R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
            assert np.linalg.norm(cur - prev) <= np.linalg.norm(cur @ R - prev) + 1e-12
    # a repeated matrix gives the same embedding at every step (signs fixed by Procrustes)
    same = DynamicPCA(window=2).fit([counts[0]] * 4)
    assert np.allclose(same.embeddings_, same.embeddings_[0], atol=1e-10)


def test_dynamic_pca_predictions_and_validation():
    counts = [two_topics(seed=s) for s in range(3)]
    model = DynamicPCA().fit(counts)
    L = model.log_word_given_author(t=1)
    assert L.shape == (8, 10)
    assert np.allclose(np.exp(L).sum(axis=1), 1.0)
    # an author of topic one prefers the words of topic one
    assert np.exp(L[0, :5]).sum() > np.exp(L[0, 5:]).sum()
    with pytest.raises(ValueError, match="epsilon"):
        DynamicPCA(epsilon=1.0).fit(counts)
    with pytest.raises(ValueError, match="window"):
        DynamicPCA(window=0).fit(counts)
    with pytest.raises(ValueError, match="no counts"):
        DynamicPCA().fit([np.zeros((3, 4))])


# ------------------------------------------------------------------ LLE


def test_lle_embeds_authors_by_word_usage_and_places_words_between_their_users():
    C = two_topics(seed=4, A=12, W=10, strong=10.0, weak=1.0)
    model = CooccurrenceLLE(n_neighbors=4).fit([np.zeros_like(C), C])  # only the last step
    assert not model.degenerate_ and model.degeneracy_ is None
    Y = model.embedding_
    assert Y.shape == (22, 2)
    authors = Y[:12]
    # topic groups are separated: every author is nearer its own group's mean
    means = np.array([authors[:6].mean(0), authors[6:].mean(0)])
    own = np.r_[np.zeros(6, int), np.ones(6, int)]
    dist = np.linalg.norm(authors[:, None] - means[None], axis=-1)
    assert np.all(dist.argmin(axis=1) == own)
    # words sit at the p(a | w)-weighted mean of their users
    users = C / C.sum(axis=0)
    assert np.allclose(Y[12:], users.T @ authors)
    L = model.log_word_given_author()
    assert np.allclose(np.exp(L).sum(axis=1), 1.0)


def test_degeneracy_detection():
    rng = np.random.default_rng(5)
    good = rng.normal(size=(10, 2))
    assert degeneracy(good) is None
    assert "non-finite" in degeneracy(np.vstack([good, [np.nan, 0.0]]))
    line = np.c_[np.arange(10.0), 2 * np.arange(10.0)]
    assert "collapsed dimension" in degeneracy(line)
    clumps = np.repeat(rng.normal(size=(3, 2)), 4, axis=0)
    assert "coincide" in degeneracy(clumps)


def test_lle_reports_degenerate_embeddings_instead_of_using_them():
    C = np.zeros((10, 6))
    C[:5, :3] = 5.0  # two groups of authors with identical word usage
    C[5:, 3:] = 5.0
    with pytest.raises(DegenerateEmbeddingError, match="degenerate: .*coincide"):
        CooccurrenceLLE(n_neighbors=4).fit(C)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CooccurrenceLLE(n_neighbors=4, on_degenerate="warn").fit(C)
    assert model.degenerate_ and "coincide" in model.degeneracy_
    assert any("degenerate" in str(w.message) for w in caught)


def test_lle_validation():
    C = two_topics(seed=6)
    C[2] = 0.0
    with pytest.raises(ValueError, match="author 2"):
        CooccurrenceLLE().fit(C)
    with pytest.raises(ValueError, match="n_neighbors"):
        CooccurrenceLLE(n_neighbors=8).fit(two_topics(seed=6))
    with pytest.raises(ValueError, match="on_degenerate"):
        CooccurrenceLLE(on_degenerate="ignore").fit(two_topics(seed=6))
