"""Elastic Embedding: cost and gradient on the shared kernel, estimator, homotopy."""

import numpy as np
import pytest
import scipy.sparse as sp

from embedlab.methods.elastic import (
    ElasticCost,
    ElasticEmbedding,
    logspace_lambdas,
    polytope_lambdas,
    scaled_pca,
)
from embedlab.methods.neighbour_affinities import InvalidAffinityError
from embedlab.optimize import DivergenceError
from embedlab.perplexity import squared_distances, symmetric_affinities


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 5, (3, 6))
    labels = np.repeat(np.arange(3), 30)
    return centres[labels] + rng.normal(0, 1, (90, 6)), labels


def direct_cost(V_plus, V_minus, lam, Y):
    """E from the definition, dense, ordered pairs i != j."""
    D2 = ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    W = np.exp(-D2)
    np.fill_diagonal(W, 0.0)
    Vm = np.ones_like(D2) if V_minus is None else V_minus
    return float((V_plus.toarray() * D2).sum() + lam * (Vm * W).sum())


@pytest.mark.parametrize("kind", ["distance", "uniform"])
def test_cost_matches_definition_and_finite_differences(blobs, kind):
    X, _ = blobs
    D2 = squared_distances(X)
    V_plus = symmetric_affinities(D2, 15.0)
    V_minus = D2 / D2.sum() if kind == "distance" else None
    lam = 50.0 if kind == "distance" else 1e-3
    objective = ElasticCost(V_plus, V_minus, lam)
    Y = np.random.default_rng(1).normal(0, 1.0, (len(X), 2))
    cost, grad = objective(Y)
    assert cost == pytest.approx(direct_cost(V_plus, V_minus, lam, Y), rel=1e-12)
    numeric = np.zeros_like(Y)
    h = 1e-5
    for i in range(len(Y)):
        for k in range(2):
            Yp, Ym = Y.copy(), Y.copy()
            Yp[i, k] += h
            Ym[i, k] -= h
            numeric[i, k] = (objective(Yp)[0] - objective(Ym)[0]) / (2 * h)
    assert np.linalg.norm(grad - numeric) / np.linalg.norm(numeric) < 1e-6
    # both terms matter at this point (the test would miss a wrong repulsion otherwise)
    attraction = (V_plus.toarray() * squared_distances(Y)).sum()
    assert 0.05 < attraction / cost < 0.95


def test_gradient_formula_is_the_papers(blobs):
    X, _ = blobs
    D2 = squared_distances(X)
    V_plus = symmetric_affinities(D2, 15.0)
    V_minus = D2 / D2.sum()
    Y = np.random.default_rng(2).normal(0, 0.5, (len(X), 2))
    W = np.exp(-squared_distances(Y))
    np.fill_diagonal(W, 0.0)
    M = V_plus.toarray() - 20.0 * V_minus * W
    expected = 4.0 * (M.sum(1)[:, None] * Y - M @ Y)  # 4 sum_j m_ij (y_i - y_j)
    _, grad = ElasticCost(V_plus, V_minus, 20.0)(Y)
    np.testing.assert_allclose(grad, expected, rtol=1e-9, atol=1e-12)


def test_invalid_weights_fail_early(blobs):
    X, _ = blobs
    V = symmetric_affinities(squared_distances(X), 15.0)
    asym = V.tolil()
    asym[0, 1] = asym[0, 1] * 3 + 1e-3
    with pytest.raises(InvalidAffinityError, match="symmetric"):
        ElasticCost(asym.tocsr(), None, 1.0)
    with pytest.raises(ValueError, match="V-"):
        ElasticCost(V, np.ones((3, 3)), 1.0)
    empty = sp.csr_matrix((90, 90))
    with pytest.raises(InvalidAffinityError):
        ElasticCost(empty, None, 1.0)


def test_estimator_separates_clusters(blobs):
    X, labels = blobs
    est = ElasticEmbedding(lam=100, perplexity=15, max_iter=400, random_state=0)
    Y = est.fit_transform(X)
    assert Y.shape == (90, 2) and est.n_iter_ <= 400
    centroids = np.array([Y[labels == c].mean(0) for c in range(3)])
    spread = max(np.linalg.norm(Y[labels == c] - centroids[c], axis=1).mean() for c in range(3))
    gaps = [np.linalg.norm(centroids[a] - centroids[b]) for a in range(3) for b in range(a)]
    assert min(gaps) > 2 * spread
    D2 = squared_distances(X)
    rebuilt = ElasticCost(symmetric_affinities(D2, 15.0), D2 / D2.sum(), 100.0)
    assert est.cost_ == pytest.approx(rebuilt.cost(Y), rel=1e-12)


def test_scaled_pca_init():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 4)) * np.array([5.0, 1.0, 0.2, 0.1])
    Y = scaled_pca(X)
    np.testing.assert_allclose(Y.std(axis=0), 1e-4, rtol=1e-12)
    assert abs(np.corrcoef(Y[:, 0], X[:, 0])[0, 1]) > 0.95


def test_schedules_end_at_the_target():
    lams = logspace_lambdas(100.0, 1e-4, 50)
    assert len(lams) == 50 and lams[0] == pytest.approx(1e-4) and lams[-1] == 100.0
    assert np.allclose(np.diff(np.log10(lams)), 6 / 49)
    np.testing.assert_allclose(polytope_lambdas(100.0, 1e-4), 10.0 ** np.arange(-4, 3))
    np.testing.assert_allclose(polytope_lambdas(50.0, 1e-4), [1e-4, 1e-3, 1e-2, 0.1, 1, 10, 50])


@pytest.mark.parametrize("schedule", ["logspace", "polytope"])
def test_homotopy_warm_starts_each_stage(blobs, schedule):
    X, _ = blobs
    est = ElasticEmbedding(
        lam=100, perplexity=15, homotopy=schedule, homotopy_steps=6, stage_iter=40,
        min_iter=40, tol=0,
    ).fit(X)
    assert est.lambdas_[-1] == 100.0 and len(est.stage_starts_) == len(est.lambdas_)
    assert np.all(np.diff(est.lambdas_) > 0)
    for previous_end, start in zip(est.stage_ends_[:-1], est.stage_starts_[1:], strict=True):
        np.testing.assert_array_equal(start, previous_end)
    np.testing.assert_array_equal(est.embedding_, est.stage_ends_[-1])
    assert est.n_iter_ == 40 * len(est.lambdas_)
    # the final cost is at the target lambda
    objective = est.objective(X)
    assert est.cost_ == pytest.approx(objective.cost(est.embedding_), rel=1e-12)


def test_first_stage_budget_and_divergence(blobs):
    X, _ = blobs
    est = ElasticEmbedding(
        lam=1.0, perplexity=15, homotopy="polytope", stage_iter=10, first_stage_iter=30,
        min_iter=100, tol=0,
    ).fit(X)
    assert list(est.stage_n_iter_) == [30] + [10] * (len(est.lambdas_) - 1)
    with pytest.raises(DivergenceError, match="epoch"):
        ElasticEmbedding(lam=1000, perplexity=15, learning_rate=1e5, max_iter=300, backoff=0).fit(X)
    with pytest.raises(ValueError, match="negative_weights"):
        ElasticEmbedding(negative_weights="none").fit(X)
