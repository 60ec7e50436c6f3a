"""Sparse perplexity affinities over k nearest neighbours (exact or pynndescent)."""

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from embedlab import knn_affinities as knn
from embedlab.methods.neighbour_affinities import validate_affinities
from embedlab.perplexity import (
    PerplexityError,
    knn_conditional_affinities,
    squared_distances,
    symmetric_affinities,
)


def clusters(n: int, dims: int, seed: int, n_clusters: int = 10, spread: float = 5.0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dims)) * spread
    return centres[rng.integers(0, n_clusters, n)] + rng.normal(size=(n, dims))


def test_all_neighbours_give_the_dense_perplexity_p():
    X = clusters(150, 5, seed=1, n_clusters=3)
    sparse = knn.knn_affinities(X, perplexity=20.0, pca_dims=None, k=len(X) - 1)
    dense = symmetric_affinities(squared_distances(X), 20.0, min_affinity=0.0)
    assert sparse.method == "exact" and sparse.missed == 0
    assert sparse.P.shape == dense.shape
    assert abs(sparse.P - dense).max() <= 1e-10
    assert abs(sparse.P.sum() - 1.0) < 1e-12 and abs(sparse.P - sparse.P.T).max() == 0.0
    np.testing.assert_allclose(sparse.perplexities, 20.0, atol=1e-5)


def test_the_default_uses_three_perplexities_of_neighbours_after_pca():
    X = clusters(400, 80, seed=2)
    out = knn.knn_affinities(X, perplexity=10.0, pca_dims=50)
    assert knn.neighbours_for(30.0) == 90
    assert out.neighbours.shape == (400, 30) and out.Z.shape == (400, 50)
    assert not (out.neighbours == np.arange(400)[:, None]).any()
    rows = np.diff(out.P.indptr)
    assert rows.min() >= 30  # own neighbours, plus those who list the point
    validate_affinities(out.P)  # what NeighbourKL and the estimators take, as it is


@pytest.mark.slow
def test_nndescent_recovers_the_exact_neighbours():
    X = clusters(3000, 20, seed=3)
    out = knn.knn_affinities(X, perplexity=10.0, pca_dims=None, exact_below=1000, seed=0)
    assert out.method == "nndescent"
    exact = NearestNeighbors(n_neighbors=31).fit(X).kneighbors(X, return_distance=False)[:, 1:]
    pairs = zip(out.neighbours, exact, strict=True)
    recall = np.mean([len(set(a) & set(b)) / 30 for a, b in pairs])
    assert recall >= 0.95
    # its distances are the true squared distances to the points it lists
    i = np.arange(3000)[:, None]
    D2 = ((X[i] - X[out.neighbours]) ** 2).sum(-1)
    np.testing.assert_allclose(knn.nearest_neighbours(X, 30, 1000)[1], D2, rtol=1e-5)
    validate_affinities(out.P)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_non_finite_row_is_named(value):
    X = clusters(100, 4, seed=4)
    X[37, 2] = value
    with pytest.raises(ValueError, match="row 37"):
        knn.knn_affinities(X, perplexity=5.0)


def test_too_few_points_for_the_neighbours():
    with pytest.raises(ValueError, match="at least 91 points, got n = 60"):
        knn.knn_affinities(clusters(60, 4, seed=5), perplexity=30.0)
    with pytest.raises(ValueError, match="k \\+ 1 = 10"):
        knn.nearest_neighbours(np.zeros((9, 2)) + np.arange(9)[:, None], 9)


def test_bad_neighbour_distances_name_the_row():
    D2 = np.ones((5, 4))
    D2[3, 1] = -1.0
    with pytest.raises(ValueError, match="row 3"):
        knn_conditional_affinities(D2, 2.0)
    with pytest.raises(PerplexityError, match="k = 4"):
        knn_conditional_affinities(np.ones((5, 4)), 4.5)


def test_duplicates_never_give_nan():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 3))
    X[:40] = X[0]  # 40 copies of one point: more than the perplexity can spread over
    X[100] = X[101]  # and one pair
    out = knn.knn_affinities(X, perplexity=8.0, pca_dims=None)
    assert np.isfinite(out.P.data).all()
    validate_affinities(out.P)
    assert out.missed == 40  # the copies: all 24 neighbours at distance 0, equal weights
    idx, D2, _ = knn.nearest_neighbours(X, 24)
    P_cond, _, _ = knn_conditional_affinities(D2, 8.0)
    assert (idx[:40] < 40).all() and np.allclose(P_cond[:40], 1 / 24, rtol=1e-14, atol=0)
    assert out.neighbours[100, 0] == 101 and out.neighbours[101, 0] == 100
    assert abs(out.perplexities[100] - 8.0) <= 1e-5


def test_a_point_pushed_out_of_its_own_list_loses_its_farthest_neighbour():
    idx = np.array([[1, 0, 2], [0, 2, 1], [0, 1, 3]])  # row 2's own index is missing
    dist = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 2.0], [0.0, 0.0, 5.0]])
    kept, d = knn._drop_self(idx, dist)
    assert kept.tolist() == [[1, 2], [0, 2], [0, 1]]
    assert d.tolist() == [[0.0, 1.0], [0.0, 1.0], [0.0, 0.0]]
