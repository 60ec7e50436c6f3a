"""Numba triplet kernels against plain numpy references (per-triplet losses, the fused
coordinate gradient, the Gram-matrix gather), thread independence and numerical range."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from embedlab.kernels import triplets as kern

LOSSES = {
    "GNMDS": (kern.GNMDS, 0.0),
    "CKL": (kern.CKL, 0.1),
    "STE": (kern.STE, 0.0),
    "t-STE": (kern.TSTE, 1.0),
    "t-STE alpha=4": (kern.TSTE, 4.0),
}


def reference_loss(code: int, param: float, a: float, b: float) -> float:
    """-log p (or the hinge) written straight from the formulas, for moderate a, b."""
    if code == kern.GNMDS:
        return max(0.0, 1.0 + a - b)
    if code == kern.CKL:
        return -math.log((b + param) / (a + b + 2.0 * param))
    if code == kern.STE:
        return -math.log(math.exp(-a) / (math.exp(-a) + math.exp(-b)))
    alpha = param

    def q(d):
        return (1.0 + d / alpha) ** (-(alpha + 1.0) / 2.0)

    return -math.log(q(a) / (q(a) + q(b)))


def random_triplets(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    out = np.empty((m, 3), dtype=np.int64)
    for t in range(m):
        out[t] = rng.choice(n, size=3, replace=False)
    return out


def reference_cost_grad(code, param, X, triplets, use_log=True):
    """Dense numpy version of coords_cost_grad (np.add.at scatter)."""
    i, j, l = triplets.T
    a = ((X[i] - X[j]) ** 2).sum(1)
    b = ((X[i] - X[l]) ** 2).sum(1)
    terms = [kern.objective_term(code, param, use_log, a[t], b[t]) for t in range(len(a))]
    loss, ga, gb = (np.array(v) for v in zip(*terms, strict=True))
    u = 2.0 * ga[:, None] * (X[i] - X[j])
    v = 2.0 * gb[:, None] * (X[i] - X[l])
    G = np.zeros_like(X)
    np.add.at(G, i, u + v)
    np.add.at(G, j, -u)
    np.add.at(G, l, -v)
    return loss.sum(), G


@pytest.mark.parametrize("name", list(LOSSES))
def test_triplet_loss_matches_formula_and_its_derivatives(name):
    code, param = LOSSES[name]
    rng = np.random.default_rng(1)
    h = 1e-6
    for a, b in rng.uniform(0.05, 3.0, size=(50, 2)):
        if code == kern.GNMDS and abs(1.0 + a - b) < 1e-3:
            continue  # the hinge's kink
        loss, ga, gb = kern.triplet_loss(code, param, a, b)
        assert loss == pytest.approx(reference_loss(code, param, a, b), rel=1e-12, abs=1e-14)
        f = lambda a_, b_: reference_loss(code, param, a_, b_)  # noqa: E731
        fa = (f(a + h, b) - f(a - h, b)) / (2 * h)
        fb = (f(a, b + h) - f(a, b - h)) / (2 * h)
        assert ga == pytest.approx(fa, rel=1e-6, abs=1e-8)
        assert gb == pytest.approx(fb, rel=1e-6, abs=1e-8)


def test_ste_and_tste_stay_finite_for_far_apart_points():
    # exp(-1000) underflows: the naive -log p would be inf; log-sum-exp keeps it exact
    loss, ga, gb = kern.triplet_loss(kern.STE, 0.0, 1000.0, 1.0)
    assert loss == pytest.approx(999.0, rel=1e-12)
    assert (ga, gb) == (1.0, -1.0)
    loss, ga, gb = kern.triplet_loss(kern.STE, 0.0, 1.0, 1000.0)
    assert 0.0 < loss < 1e-300 or loss == 0.0
    assert math.isfinite(ga) and ga >= 0.0
    loss, ga, gb = kern.triplet_loss(kern.TSTE, 1.0, 1e12, 1e-3)
    assert math.isfinite(loss) and loss == pytest.approx(math.log(1e12 / 1.001), rel=1e-9)
    assert all(math.isfinite(v) for v in (ga, gb))


def test_ckl_with_zero_mu_and_coincident_points_is_finite():
    loss, ga, gb = kern.triplet_loss(kern.CKL, 0.0, 0.0, 0.0)
    assert all(math.isfinite(v) for v in (loss, ga, gb))


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("dims", [1, 2, 5])
def test_fused_coordinate_kernel_matches_numpy_reference(name, dims):
    code, param = LOSSES[name]
    rng = np.random.default_rng(dims)
    n, m = 25, 400
    X = rng.normal(size=(n, dims))
    trip = random_triplets(rng, n, m)
    cost, G = kern.coords_cost_grad(code, param, X, trip, True)
    ref_cost, ref_G = reference_cost_grad(code, param, X, trip)
    assert cost == pytest.approx(ref_cost, rel=1e-12)
    np.testing.assert_allclose(G, ref_G, rtol=1e-10, atol=1e-12)


def test_fused_kernel_is_independent_of_the_thread_count():
    rng = np.random.default_rng(3)
    n, m = 200, 5000
    X = rng.normal(size=(n, 3))
    trip = random_triplets(rng, n, m)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        c1, g1 = kern.coords_cost_grad(kern.TSTE, 2.0, X, trip, True)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        c2, g2 = kern.coords_cost_grad(kern.TSTE, 2.0, X, trip, True)
    finally:
        numba.set_num_threads(before)
    assert c1 == c2
    assert np.array_equal(g1, g2)


def test_fewer_triplets_than_chunks():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    trip = np.array([[0, 1, 2]], dtype=np.int64)
    cost, G = kern.coords_cost_grad(kern.STE, 0.0, X, trip, True)
    ref_cost, ref_G = reference_cost_grad(kern.STE, 0.0, X, trip)
    assert cost == pytest.approx(ref_cost)
    np.testing.assert_allclose(G, ref_G)


def test_sq_dists_from_coordinates_and_from_gram_agree():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(15, 3))
    trip = random_triplets(rng, 15, 100)
    a, b = kern.sq_dists(X, trip, False)
    a2, b2 = kern.sq_dists(X @ X.T, trip, True)
    i, j, l = trip.T
    np.testing.assert_allclose(a, ((X[i] - X[j]) ** 2).sum(1), rtol=1e-12)
    np.testing.assert_allclose(b, ((X[i] - X[l]) ** 2).sum(1), rtol=1e-12)
    np.testing.assert_allclose(a2, a, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b2, b, rtol=1e-9, atol=1e-12)


def test_incidence_lists_every_slot_once():
    rng = np.random.default_rng(5)
    n = 12
    trip = random_triplets(rng, n, 50)
    indptr, slots = kern.incidence(trip, n)
    assert indptr[0] == 0 and indptr[-1] == trip.size
    assert np.array_equal(np.sort(slots), np.arange(trip.size))
    for p in range(n):
        for s in slots[indptr[p] : indptr[p + 1]]:
            assert trip[s // 3, s % 3] == p


@pytest.mark.parametrize("name", ["GNMDS", "CKL", "STE"])
def test_gram_gather_matches_numpy_reference(name):
    code, param = LOSSES[name]
    rng = np.random.default_rng(6)
    n = 14
    Y = rng.normal(size=(n, 3))
    K = Y @ Y.T + 0.01 * rng.normal(size=(n, n))  # deliberately not symmetric
    trip = random_triplets(rng, n, 120)
    loss, ga, gb = kern.triplet_terms(code, param, K, trip, True, True)
    indptr, slots = kern.incidence(trip, n)
    G = kern.gather_grad_gram(n, trip, indptr, slots, ga, gb, False)
    ref = np.zeros((n, n))
    i, j, l = trip.T
    np.add.at(ref, (i, i), ga + gb)
    np.add.at(ref, (j, j), ga)
    np.add.at(ref, (l, l), gb)
    np.add.at(ref, (i, j), -ga)
    np.add.at(ref, (j, i), -ga)
    np.add.at(ref, (i, l), -gb)
    np.add.at(ref, (l, i), -gb)
    np.testing.assert_allclose(G, ref, rtol=1e-12, atol=1e-12)
    a, b = kern.sq_dists(K, trip, True)
    ref_loss = [kern.triplet_loss(code, param, a[t], b[t])[0] for t in range(len(a))]
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-12)


@pytest.mark.parametrize("name", ["STE", "t-STE", "t-STE alpha=4"])
def test_sum_of_probabilities_term_is_minus_p_with_its_derivatives(name):
    code, param = LOSSES[name]
    for a, b in [(0.3, 1.7), (2.0, 0.1), (1.0, 1.0)]:
        p = math.exp(-reference_loss(code, param, a, b))
        loss, ga, gb = kern.objective_term(code, param, False, a, b)
        assert loss == pytest.approx(-p, rel=1e-12)
        h = 1e-6
        fa = kern.objective_term(code, param, False, a + h, b)[0]
        fa -= kern.objective_term(code, param, False, a - h, b)[0]
        fb = kern.objective_term(code, param, False, a, b + h)[0]
        fb -= kern.objective_term(code, param, False, a, b - h)[0]
        assert ga == pytest.approx(fa / (2 * h), rel=1e-6)
        assert gb == pytest.approx(fb / (2 * h), rel=1e-6)
        assert kern.objective_term(code, param, True, a, b) == kern.triplet_loss(code, param, a, b)


@pytest.mark.parametrize("name", ["STE", "t-STE"])
def test_fused_kernel_sum_of_probabilities_matches_numpy_reference(name):
    code, param = LOSSES[name]
    rng = np.random.default_rng(8)
    X = rng.normal(size=(25, 2))
    trip = random_triplets(rng, 25, 300)
    cost, G = kern.coords_cost_grad(code, param, X, trip, False)
    ref_cost, ref_G = reference_cost_grad(code, param, X, trip, use_log=False)
    assert cost == pytest.approx(ref_cost, rel=1e-12)
    assert cost < 0  # -sum p
    np.testing.assert_allclose(G, ref_G, rtol=1e-10, atol=1e-12)
    log_cost, _ = kern.coords_cost_grad(code, param, X, trip, True)
    assert log_cost > 0


def test_one_sided_gram_gather_puts_the_pair_derivatives_on_k_ij_and_k_il_only():
    code, param = LOSSES["STE"]
    rng = np.random.default_rng(9)
    n = 14
    Y = rng.normal(size=(n, 3))
    K = Y @ Y.T
    trip = random_triplets(rng, n, 120)
    _, ga, gb = kern.triplet_terms(code, param, K, trip, True, True)
    indptr, slots = kern.incidence(trip, n)
    G = kern.gather_grad_gram(n, trip, indptr, slots, ga, gb, True)
    ref = np.zeros((n, n))
    i, j, l = trip.T
    np.add.at(ref, (i, i), ga + gb)
    np.add.at(ref, (j, j), ga)
    np.add.at(ref, (l, l), gb)
    np.add.at(ref, (i, j), -2 * ga)
    np.add.at(ref, (i, l), -2 * gb)
    np.testing.assert_allclose(G, ref, rtol=1e-12, atol=1e-12)
    sym = kern.gather_grad_gram(n, trip, indptr, slots, ga, gb, False)
    np.testing.assert_allclose(0.5 * (G + G.T), sym, rtol=1e-12, atol=1e-12)
    assert not np.allclose(G, G.T)
