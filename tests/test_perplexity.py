"""Perplexity calibration of Gaussian affinities."""

import numpy as np
import pytest

from embedlab.perplexity import (
    PerplexityError,
    conditional_affinities,
    squared_distances,
    symmetric_affinities,
)


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(3)
    return np.vstack([rng.normal(0, 1, (60, 5)), rng.normal(4, 0.1, (40, 5))])


@pytest.mark.parametrize("target", [5.0, 30.0])
def test_every_row_hits_the_target_perplexity(points, target):
    P, betas, reached = conditional_affinities(squared_distances(points), target)
    # recompute the perplexity of each row from P itself (not from the returned values)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.nansum(np.where(P > 0, P * np.log(P), 0.0), axis=1)
    assert np.abs(np.exp(entropy) - target).max() <= 1e-5
    assert np.abs(reached - target).max() <= 1e-5
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(np.diag(P) == 0) and np.all(betas > 0)
    # the tight cluster needs a much larger precision than the broad one
    assert np.median(betas[60:]) > 10 * np.median(betas[:60])


def test_affinities_are_gaussian_in_distance(points):
    D2 = squared_distances(points)
    P, betas, _ = conditional_affinities(D2, 10.0)
    i = 7
    others = np.arange(len(points)) != i
    expected = np.exp(-betas[i] * D2[i, others])
    np.testing.assert_allclose(P[i, others], expected / expected.sum(), rtol=1e-10)


def test_symmetric_affinities_are_a_joint_distribution(points):
    V = symmetric_affinities(squared_distances(points), 20.0)
    assert abs(V.sum() - 1.0) < 1e-12
    assert abs(V - V.T).max() < 1e-15
    assert V.diagonal().max() == 0


def test_squared_distances_match_direct(points):
    direct = ((points[:, None, :] - points[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(squared_distances(points), direct, atol=1e-10)


def test_bad_inputs_fail_early(points):
    D2 = squared_distances(points)
    with pytest.raises(PerplexityError, match="n - 1"):
        conditional_affinities(D2, 150.0)
    bad = points.copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match="row 4"):
        squared_distances(bad)
    duplicates = np.zeros((20, 3))
    duplicates[0] = 1.0  # 19 identical points: no perplexity between 1 and 19 but 19 or ~1
    with pytest.raises(PerplexityError, match="row"):
        conditional_affinities(squared_distances(duplicates), 5.0)
