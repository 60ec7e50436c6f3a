"""Triplet-embedding objectives, projections, optimiser, estimators and evaluation helpers."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from embedlab.evaluate.knn import loo_1nn_error_rate
from embedlab.evaluate.triplets import holdout_split, kfold_triplets, triplet_error
from embedlab.experiments.tste.paper_text import validate
from embedlab.experiments.tste.settings import PaperTextSettings
from embedlab.kernels import triplets as kern
from embedlab.methods.triplets import (
    CKL,
    GNMDS,
    METHODS,
    STE,
    TSTE,
    CoordsObjective,
    GramObjective,
    StepRule,
    accelerated_descent,
    adaptive_descent,
    check_triplets,
    gram_embedding,
    project_psd,
    project_psd_released,
    project_unit_diagonal,
)

from .helpers import central_difference

X_LOSSES = {
    "GNMDS": (kern.GNMDS, 0.0),
    "CKL": (kern.CKL, 0.1),
    "STE": (kern.STE, 0.0),
    "t-STE": (kern.TSTE, 1.0),
    "t-STE alpha=2": (kern.TSTE, 2.0),
}
K_LOSSES = {name: X_LOSSES[name] for name in ("GNMDS", "CKL", "STE")}


def random_triplets(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    return np.array([rng.choice(n, size=3, replace=False) for _ in range(m)], dtype=np.int64)


def planted_triplets(points: np.ndarray, m: int, seed: int, min_ratio: float = 1.0):
    """m triplets (i, j, l) with d_ij < d_il in ``points``, i, j, l uniform; only those with
    d_il >= min_ratio * d_ij are kept."""
    rng = np.random.default_rng(seed)
    D = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
    out = []
    while len(out) < m:
        i, j, l = rng.choice(len(points), size=3, replace=False)
        if D[i, j] > D[i, l]:
            j, l = l, j
        if D[i, l] >= min_ratio * D[i, j]:
            out.append((i, j, l))
    return np.array(out, dtype=np.int64)


def relative_error(g: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(g - ref) / np.linalg.norm(ref))


def gram_problem(seed: int, rank: int, n: int = 10, m: int = 60):
    """(n, m random triplets, a Gram matrix K = Y Y^T of the given rank, a, b of K)."""
    rng = np.random.default_rng(seed)
    trip = random_triplets(rng, n, m)
    Y = rng.normal(size=(n, rank))
    K = Y @ Y.T
    a, b = kern.sq_dists(K, trip, True)
    return n, trip, K, a, b


def away_from_hinge(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.abs(1.0 + a - b) > 1e-3))


# ------------------------------------------------------------------ finite-difference gradients


@pytest.mark.parametrize("name", list(X_LOSSES))
@pytest.mark.parametrize(("dims", "lam"), [(2, 0.0), (3, 0.3)])
def test_coordinate_objective_gradient_matches_finite_differences(name, dims, lam):
    code, param = X_LOSSES[name]
    rng = np.random.default_rng(dims)
    n, m = 10, 60
    trip = random_triplets(rng, n, m)
    X = rng.normal(size=(n, dims))
    a, b = kern.sq_dists(X, trip, False)
    assert away_from_hinge(a, b)
    objective = CoordsObjective(code, param, lam, trip)
    cost, G = objective(X)
    fd = central_difference(lambda Z: objective(Z)[0], X)
    assert np.linalg.norm(fd) > 1e-3
    assert relative_error(G, fd) < 1e-6


@pytest.mark.parametrize("name", list(K_LOSSES))
@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_gram_objective_gradient_matches_finite_differences(name, lam):
    code, param = K_LOSSES[name]
    n, trip, K, a, b = gram_problem(11, 4)
    assert away_from_hinge(a, b)
    objective = GramObjective(code, param, lam, trip, n)
    cost, G = objective(K)
    fd = central_difference(lambda Z: objective(Z)[0], K)
    assert np.linalg.norm(fd) > 1e-3
    assert relative_error(G, fd) < 1e-6
    assert np.allclose(G, G.T)


@pytest.mark.parametrize("name", ["STE", "t-STE", "t-STE alpha=2"])
@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_sum_of_probabilities_coordinate_gradient_matches_finite_differences(name, lam):
    code, param = X_LOSSES[name]
    rng = np.random.default_rng(7)
    n, m = 10, 60
    trip = random_triplets(rng, n, m)
    X = rng.normal(size=(n, 2))
    objective = CoordsObjective(code, param, lam, trip, use_log=False)
    cost, G = objective(X)
    i, j, l = trip.T
    a = ((X[i] - X[j]) ** 2).sum(1)
    b = ((X[i] - X[l]) ** 2).sum(1)
    if code == kern.STE:
        p = np.exp(-a) / (np.exp(-a) + np.exp(-b))
    else:
        q = lambda d: (1 + d / param) ** (-(param + 1) / 2)  # noqa: E731
        p = q(a) / (q(a) + q(b))
    assert cost == pytest.approx(-p.sum() + lam * np.sum(X**2), rel=1e-10)
    fd = central_difference(lambda Z: objective(Z)[0], X)
    assert np.linalg.norm(fd) > 1e-3
    assert relative_error(G, fd) < 1e-6


@pytest.mark.parametrize("lam", [0.0, 0.4])
def test_sum_of_probabilities_gram_gradient_matches_finite_differences(lam):
    n, trip, K, a, b = gram_problem(12, 3)
    objective = GramObjective(kern.STE, 0.0, lam, trip, n, loss_weight=0.6, use_log=False)
    cost, G = objective(K)
    p = np.exp(-a) / (np.exp(-a) + np.exp(-b))
    assert cost == pytest.approx(-0.6 * p.sum() + lam * np.trace(K), rel=1e-10)
    fd = central_difference(lambda Z: objective(Z)[0], K)
    assert np.linalg.norm(fd) > 1e-3
    assert relative_error(G, fd) < 1e-6


@pytest.mark.parametrize("name", list(K_LOSSES))
def test_one_sided_gram_gradient_is_the_derivative_with_a_read_off_k_ij(name):
    # the released gradient differentiates a = k_ii + k_jj - 2 k_ij in K's (i, j) entry:
    # its symmetric part is the exact gradient of C(K), its antisymmetric part is not zero
    code, param = K_LOSSES[name]
    n, trip, K, a, b = gram_problem(11, 4)
    exact = GramObjective(code, param, 0.3, trip, n)
    coded = GramObjective(code, param, 0.3, trip, n, one_sided=True)
    c1, G1 = exact(K)
    c2, G2 = coded(K)
    assert c1 == c2
    np.testing.assert_allclose(0.5 * (G2 + G2.T), G1, rtol=1e-12, atol=1e-12)
    assert np.abs(G2 - G2.T).max() > 1e-3
    i, j = trip[0, 0], trip[0, 1]
    mask = np.zeros((n, n), dtype=bool)
    mask[trip[:, 0], trip[:, 1]] = mask[trip[:, 0], trip[:, 2]] = True
    lower_only = ~mask & mask.T  # (j, i) entries with no triplet having i at (i, j) or (i, l)
    assert np.all(G2[lower_only] == 0.0)
    assert G2[i, j] != 0.0


def test_released_ste_k_cost_holds_lam_n_and_its_gradient_lam_i():
    n, trip, K, a, b = gram_problem(22, 3)
    lam = 0.4
    coded = GramObjective(kern.STE, 0.0, lam, trip, n, loss_weight=1 - lam, trace_in_cost=False)
    exact = GramObjective(kern.STE, 0.0, lam, trip, n, loss_weight=1 - lam)
    cost, G = coded(K)
    nll = -np.log(np.exp(-a) / (np.exp(-a) + np.exp(-b))).sum()
    assert cost == pytest.approx((1 - lam) * nll + lam * n, rel=1e-12)
    np.testing.assert_array_equal(G, exact(K)[1])
    # the cost difference of two kernels is the likelihood's alone
    K2 = 3.0 * K
    a2, b2 = kern.sq_dists(K2, trip, True)
    nll2 = -np.log(np.exp(-a2) / (np.exp(-a2) + np.exp(-b2))).sum()
    assert coded(K2)[0] - cost == pytest.approx((1 - lam) * (nll2 - nll), rel=1e-10)


def test_objective_costs_match_the_formulas():
    rng = np.random.default_rng(2)
    n = 8
    trip = random_triplets(rng, n, 30)
    X = rng.normal(size=(n, 2))
    i, j, l = trip.T
    a = ((X[i] - X[j]) ** 2).sum(1)
    b = ((X[i] - X[l]) ** 2).sum(1)
    lam = 0.2
    reg = lam * np.sum(X**2)
    expected = {
        kern.GNMDS: np.maximum(0, 1 + a - b).sum(),
        kern.CKL: -np.log((b + 0.1) / (a + b + 0.2)).sum(),
        kern.STE: -np.log(np.exp(-a) / (np.exp(-a) + np.exp(-b))).sum(),
        kern.TSTE: -np.log(1 / (1 + a) / (1 / (1 + a) + 1 / (1 + b))).sum(),
    }
    params = {kern.GNMDS: 0.0, kern.CKL: 0.1, kern.STE: 0.0, kern.TSTE: 1.0}
    for code, value in expected.items():
        cost, _ = CoordsObjective(code, params[code], lam, trip)(X)
        assert cost == pytest.approx(value + reg, rel=1e-10)
    K = X @ X.T
    cost, _ = GramObjective(kern.STE, 0.0, lam, trip, n)(K)
    assert cost == pytest.approx(expected[kern.STE] + lam * np.trace(K), rel=1e-10)


# ----------------------------------------------------------------------------- projections


def test_psd_projection_is_psd_idempotent_and_nearest_on_a_known_case():
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    w = np.array([3.0, -2.0, 1.0, -0.5, 0.0])
    K = (Q * w) @ Q.T
    P = project_psd(K)
    expected = (Q * np.maximum(w, 0)) @ Q.T
    np.testing.assert_allclose(P, expected, atol=1e-12)
    assert np.linalg.eigvalsh(P).min() > -1e-12
    np.testing.assert_allclose(project_psd(P), P, atol=1e-12)
    # the Frobenius distance to K is the norm of the negative eigenvalues, and no other
    # PSD matrix nearby is closer
    best = np.linalg.norm(K - P)
    assert best == pytest.approx(np.sqrt(2.0**2 + 0.5**2))
    for _ in range(200):
        E = rng.normal(scale=0.1, size=(5, 5))
        other = project_psd(P + E + E.T)
        assert np.linalg.norm(K - other) >= best - 1e-12


def test_psd_projection_symmetrises_its_input():
    K = np.array([[1.0, 2.0], [0.0, 1.0]])
    P = project_psd(K)
    np.testing.assert_allclose(P, P.T)
    np.testing.assert_allclose(P, project_psd(np.array([[1.0, 1.0], [1.0, 1.0]])))


def test_float32_psd_projection_matches_float64_to_single_precision():
    rng = np.random.default_rng(6)
    Y = rng.normal(size=(200, 120))
    K = Y @ Y.T / 120 - 0.3 * np.eye(200)  # about a third of the spectrum negative
    P64, P32 = project_psd(K), project_psd(K, precision="float32")
    assert P32.dtype == np.float64
    scale = np.abs(np.linalg.eigvalsh(K)).max()
    err = np.abs(P32 - P64).max() / scale
    assert 1e-12 < err < 1e-5  # really single precision, and only that far off
    U32 = project_unit_diagonal(K, precision="float32")
    np.testing.assert_allclose(U32, project_unit_diagonal(K), atol=1e-5)
    with pytest.raises(ValueError, match="precision"):
        project_psd(K, precision="float16")


def test_float32_k_form_reaches_the_float64_objective():
    rng = np.random.default_rng(7)
    points = rng.normal(size=(60, 3))
    trip = planted_triplets(points, 1500, seed=8)
    costs = {}
    for precision in ("float64", "float32"):
        est = STE(
            n_components=3, form="K", lam=0.1, max_iter=300, random_state=0, precision=precision
        ).fit(trip, n=60)
        costs[precision] = est.cost_
    assert costs["float32"] == pytest.approx(costs["float64"], rel=1e-4)
    with pytest.raises(ValueError, match="K form only"):
        STE(form="X", precision="float32").fit(trip, n=60)
    with pytest.raises(ValueError, match="precision"):
        GNMDS(form="K", precision="half").fit(trip, n=60)


def test_unit_diagonal_projection_keeps_psd_and_sets_the_diagonal():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(12, 12))
    P = project_unit_diagonal(A + A.T)
    np.testing.assert_allclose(np.diag(P), 1.0)
    assert np.linalg.eigvalsh(P).min() > -1e-10
    np.testing.assert_allclose(project_unit_diagonal(P), P, atol=1e-10)
    # a row that the PSD projection zeroes out becomes an isolated unit vector
    Z = project_unit_diagonal(np.diag([1.0, -3.0, 2.0]))
    np.testing.assert_allclose(Z, np.eye(3), atol=1e-12)


def test_gram_embedding_recovers_the_distances_of_a_low_rank_gram():
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(20, 2)) + 3.0  # off-centre: the embedding is centred
    Z = gram_embedding(Y @ Y.T, 2)
    D = lambda A: ((A[:, None] - A[None]) ** 2).sum(-1)  # noqa: E731
    np.testing.assert_allclose(D(Z), D(Y), atol=1e-9)
    assert np.abs(Z.mean(axis=0)).max() < 1e-9


# ----------------------------------------------------------------------------- optimiser


def test_adaptive_descent_minimises_a_quadratic_and_returns_the_best_iterate():
    target = np.array([1.0, -2.0, 0.5])

    def quadratic(x):
        return float(np.sum((x - target) ** 2)), 2.0 * (x - target)

    res = adaptive_descent(quadratic, np.zeros(3), StepRule(0.1, max_iter=1000), tol=1e-12)
    np.testing.assert_allclose(res.x, target, atol=1e-5)
    assert res.cost == min(res.costs)
    assert res.n_iter == len(res.costs)


def test_adaptive_descent_halves_the_step_when_the_cost_rises_and_stops():
    # step 1.5 on sum x^2 overshoots (x -> -2x): every step raises the cost, so the step is
    # halved each time and the descent stops after ``patience`` non-decreasing iterations
    calls = []

    def quadratic(x):
        calls.append(x.copy())
        return float(np.sum(x**2)), 2.0 * x

    res = adaptive_descent(quadratic, np.ones(2), StepRule(1.5, max_iter=1000, patience=5))
    assert res.n_iter < 50
    assert res.cost == min(res.costs)


def test_adaptive_descent_raises_on_divergence():
    def exploding(x):
        return float("nan"), np.ones_like(x)

    with pytest.raises(FloatingPointError, match="diverged at iteration 1"):
        adaptive_descent(exploding, np.zeros(2), StepRule(1.0, name="test-objective"))


# ----------------------------------------------------------------------------- estimators


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ([[0, 1, 2.5]], r"row 0 has non-integer indices \[0.0, 1.0, 2.5\]"),
        ([[0, 1, 2], [0, 1, 7]], r"row 1 has indices \[0, 1, 7\] outside \[0, n\) with n = 5"),
        ([[0, 1, 2], [-1, 1, 2]], r"row 1 has indices \[-1, 1, 2\]"),
        ([[0, 1, 2], [3, 3, 2]], r"row 1 repeats an index: \[3, 3, 2\]"),
        ([[0, 1]], r"shape \(m, 3\)"),
        (np.zeros((0, 3), dtype=int), r"0 sample\(s\)"),
        ([["a", "b", "c"]], "must be integers"),
    ],
)
def test_bad_triplets_are_rejected_with_row_and_values(bad, message):
    with pytest.raises(ValueError, match=message):
        STE().fit(bad, n=5)


def test_check_triplets_accepts_integral_floats_and_infers_n():
    trip, n = check_triplets(np.array([[0.0, 3.0, 1.0]]))
    assert trip.dtype == np.int64 and n == 4


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (GNMDS(form="Z"), "form must be one of"),
        (TSTE(n_components=0), "n_components must be a positive integer"),
        (STE(lam=-1.0), "lam must be"),
        (CKL(mu=-0.1), "mu must be"),
        (CKL(form="K", lam=1.0), "lam must be 0"),
        (TSTE(alpha=-1.0), "alpha must be a positive number"),
        (STE(form="K", n_components=9), "exceeds the number of items"),
    ],
)
def test_bad_parameters_are_rejected(estimator, message):
    with pytest.raises(ValueError, match=message):
        estimator.fit([[0, 1, 2], [3, 4, 5], [6, 7, 0]])


@pytest.mark.parametrize("name", list(METHODS))
def test_fit_is_deterministic_for_a_seed(name):
    rng = np.random.default_rng(6)
    trip = random_triplets(rng, 15, 150)
    first = METHODS[name](random_state=3, max_iter=60).fit(trip)
    again = METHODS[name](random_state=3, max_iter=60).fit(trip)
    other = METHODS[name](random_state=4, max_iter=60).fit(trip)
    assert np.array_equal(first.embedding_, again.embedding_)
    assert first.cost_ == again.cost_ and first.n_iter_ == again.n_iter_
    assert not np.array_equal(first.embedding_, other.embedding_)
    assert first.embedding_.shape == (15, 2)
    assert first.cost_ == min(first.cost_history_)


def test_estimator_attributes_and_sklearn_conventions():
    rng = np.random.default_rng(7)
    trip = random_triplets(rng, 10, 80)
    est = TSTE(n_components=3, random_state=0, max_iter=50)
    Y = est.fit_transform(trip, n=12)  # items 10, 11 are in no triplet
    assert Y.shape == (12, 3) and Y is est.embedding_
    assert est.alpha_ == 2.0
    assert 1 <= est.n_iter_ <= 50 and np.isfinite(est.cost_)
    assert clone(est).get_params() == est.get_params()
    assert est.score(trip) == pytest.approx(1.0 - triplet_error(Y, trip))
    K = STE(form="K", random_state=0, max_iter=20).fit(trip)
    assert K.kernel_.shape == (10, 10) and K.embedding_.shape == (10, 2)
    with pytest.raises(Exception, match="not fitted"):
        GNMDS().score(trip)


def test_ckl_k_kernel_has_unit_diagonal_and_is_psd():
    rng = np.random.default_rng(8)
    trip = random_triplets(rng, 12, 150)
    est = CKL(form="K", random_state=0, max_iter=100).fit(trip)
    np.testing.assert_allclose(np.diag(est.kernel_), 1.0)
    assert np.linalg.eigvalsh(est.kernel_).min() > -1e-10


# ------------------------------------------------------------------------- planted structure

# Points in the plane; triplets whose two distances differ by a factor >= 1.5. The
# ratio-type losses (CKL, t-STE) trade a few near-tie triplets for larger margins elsewhere
# and satisfy only ~93% of *all* triplets of a planted set; with the margin every method
# must satisfy >= 95%. K forms choose their trace weight lam on held-out triplets.
PLANT_N, PLANT_M = 30, 1500


@pytest.fixture(scope="module")
def planted():
    points = np.random.default_rng(0).normal(size=(PLANT_N, 2))
    return planted_triplets(points, PLANT_M, seed=1, min_ratio=1.5)


@pytest.mark.parametrize("name", list(METHODS))
def test_planted_triplets_are_satisfied(name, planted):
    make = METHODS[name]
    kwargs = {"random_state": 0}
    if name in ("GNMDS-K", "STE-K"):
        settings = PaperTextSettings(
            dims=(2,), n_folds=10, seed=0, max_iter=1000, kform_solver=None, max_triplets=None,
            grid={"lam": [1.0, 3.0, 10.0, 30.0]},
        )  # fmt: skip
        validation = validate(name, planted, PLANT_N, settings=settings)
        assert min(validation.errors[2]) < 0.1
        kwargs["lam"] = validation.chosen[2]["lam"]
    est = make(**kwargs).fit(planted, n=PLANT_N)
    assert est.score(planted) >= 0.95, f"{name}: {est.score(planted):.3f}"


def test_tste_separates_planted_clusters():
    rng = np.random.default_rng(9)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0], [6.0, 6.0]])
    labels = np.repeat(np.arange(4), 20)
    points = centres[labels] + rng.normal(size=(80, 2))
    trip = planted_triplets(points, 3000, seed=2)
    Y = TSTE(random_state=0).fit_transform(trip, n=80)
    assert loo_1nn_error_rate(Y, labels) <= 0.05
    assert loo_1nn_error_rate(points, labels) <= 0.05  # the clusters are separable at all


# ------------------------------------------------------------------------------ evaluation


def test_triplet_error_counts_violations_and_ties():
    Y = np.array([[0.0], [1.0], [3.0], [-1.0]])
    trip = np.array([[0, 1, 2], [0, 2, 1], [0, 1, 3], [1, 0, 2]])
    # satisfied, violated, tie (violated), satisfied
    assert triplet_error(Y, trip) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="embedding has 4 rows"):
        triplet_error(Y, [[0, 1, 4]])


def test_kfold_triplets_partitions_the_triplets():
    folds = kfold_triplets(103, n_folds=10, seed=1)
    assert len(folds) == 10
    tests = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tests), np.arange(103))
    for train, test in folds:
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == 103
        assert len(test) in (10, 11)
    assert all(
        np.array_equal(a[1], b[1])
        for a, b in zip(folds, kfold_triplets(103, 10, seed=1), strict=True)
    )
    assert not np.array_equal(folds[0][1], kfold_triplets(103, 10, seed=2)[0][1])
    with pytest.raises(ValueError, match="cannot split 5 triplets into 10 folds"):
        kfold_triplets(5, 10)


def test_holdout_split_is_seeded_disjoint_and_sized():
    fit, val = holdout_split(200, 0.1, seed=0)
    assert len(val) == 20 and len(fit) == 180
    assert np.array_equal(np.sort(np.concatenate([fit, val])), np.arange(200))
    assert np.all(np.diff(fit) > 0) and np.all(np.diff(val) > 0)  # generation order kept
    assert np.array_equal(val, holdout_split(200, 0.1, seed=0)[1])
    assert not np.array_equal(val, holdout_split(200, 0.1, seed=1)[1])
    with pytest.raises(ValueError, match="val_fraction"):
        holdout_split(200, 1.5, seed=0)
    with pytest.raises(ValueError, match="empty split"):
        holdout_split(5, 0.01, seed=0)


# ------------------------------------------------------- the t-STE authors' coded objectives


@pytest.mark.parametrize("weight", [0.3, 0.9])
def test_coded_gnmds_k_objective_cost_and_gradient(weight):
    # (1 - mu) trace(K) + mu sum hinge, expressed as loss_weight = mu, lam = 1 - mu
    n, trip, K, a, b = gram_problem(11, 4)  # a draw with no triplet on the hinge
    assert away_from_hinge(a, b)
    objective = GramObjective(kern.GNMDS, 0.0, 1.0 - weight, trip, n, loss_weight=weight)
    cost, G = objective(K)
    expected = (1 - weight) * np.trace(K) + weight * np.maximum(0.0, 1.0 + a - b).sum()
    assert cost == pytest.approx(expected, rel=1e-12)
    fd = central_difference(lambda Z: objective(Z)[0], K)
    assert np.linalg.norm(fd) > 1e-3
    assert relative_error(G, fd) < 1e-6


@pytest.mark.parametrize("lam", [0.1, 0.7])
def test_coded_ste_k_objective_cost_and_gradient(lam):
    # (1 - lambda) (-log-likelihood) + lambda trace(K)
    n, trip, K, a, b = gram_problem(22, 3)
    objective = GramObjective(kern.STE, 0.0, lam, trip, n, loss_weight=1.0 - lam)
    cost, G = objective(K)
    nll = -np.log(np.exp(-a) / (np.exp(-a) + np.exp(-b))).sum()
    assert cost == pytest.approx((1 - lam) * nll + lam * np.trace(K), rel=1e-12)
    fd = central_difference(lambda Z: objective(Z)[0], K)
    assert relative_error(G, fd) < 1e-6


def test_step_rule_multiplies_by_1_01_on_a_decrease_and_halves_otherwise():
    # f(x) = x^2 from x = 1 with step 1.5 overshoots (x -> -2x, cost up), halving brings the
    # step below 1 (cost down), the growth by 1.01 takes it back above 1 and so on: both
    # branches are taken. Each step must be the previous one times 1.01 when the cost just
    # computed fell by more than 1e-7 below the one before (the first against +inf), else 0.5.
    res = adaptive_descent(
        lambda x: (float(np.sum(x**2)), 2.0 * x), np.ones(1), StepRule(1.5, max_iter=60), tol=1e-7
    )
    steps, costs = np.asarray(res.steps), np.asarray(res.costs)
    assert steps[0] == 1.5 and len(steps) == len(costs) == res.n_iter
    previous = np.concatenate([[np.inf], costs[:-2]])
    decreased = previous > costs[:-1] + 1e-7
    np.testing.assert_allclose(steps[1:] / steps[:-1], np.where(decreased, 1.01, 0.5))
    assert decreased.sum() >= 2 and (~decreased).sum() >= 2
    # a flat cost: one "decrease" from +inf, then halved 5 times and stopped
    flat = adaptive_descent(lambda x: (1.0, np.zeros_like(x)), np.ones(1), StepRule(1.0))
    np.testing.assert_allclose(flat.steps, [1.0, 1.01, 0.505, 0.2525, 0.12625, 0.063125])
    # a decrease of exactly 1e-7 or less counts as none
    costs_seq = iter([1.0, 1.0 - 5e-8, 0.5, 0.25])
    tiny = adaptive_descent(
        lambda x: (next(costs_seq), np.zeros_like(x)), np.ones(1), StepRule(1.0, max_iter=4)
    )
    np.testing.assert_allclose(tiny.steps, [1.0, 1.01, 0.505, 0.51005])


def test_uncentred_gram_embedding_is_the_top_eigenpairs_of_k():
    rng = np.random.default_rng(4)
    Y = rng.normal(size=(12, 3)) + 5.0  # far from centred
    K = Y @ Y.T
    E = gram_embedding(K, 3, centre=False)
    np.testing.assert_allclose(E @ E.T, K, atol=1e-8)
    w = np.linalg.eigvalsh(K)[::-1][:2]
    top2 = gram_embedding(K, 2, centre=False)
    np.testing.assert_allclose(np.sort((top2**2).sum(0)), np.sort(w))


def test_coded_k_forms_start_at_rank_two_and_ckl_k_keeps_its_diagonal_free():
    rng = np.random.default_rng(5)
    trip = random_triplets(rng, 15, 200)
    est = CKL(form="K", mu=0.05, unit_diagonal=False, init_rank=2, max_iter=1, random_state=0)
    est.fit(trip, n=15)
    assert np.linalg.matrix_rank(est.kernel_, tol=1e-10) == 2  # x0 = Y Y^T, Y n x 2
    assert not np.allclose(np.diag(est.kernel_), 1.0)
    est = CKL(form="K", mu=0.05, max_iter=1, random_state=0).fit(trip, n=15)
    np.testing.assert_allclose(np.diag(est.kernel_), 1.0)
    with pytest.raises(ValueError, match="loss_weight applies to the K form"):
        GNMDS(form="X", loss_weight=0.5).fit(trip, n=15)
    with pytest.raises(ValueError, match="init_rank"):
        STE(form="K", init_rank=0).fit(trip, n=15)
    self_trip = np.vstack([trip, [[3, 3, 4]]])
    with pytest.raises(ValueError, match="repeats"):
        STE(max_iter=2).fit(self_trip, n=15)
    STE(max_iter=2).fit(self_trip, n=15, allow_self=True)


# ------------------------------------------------- the authors' released K forms and GNMDS-X


def test_released_projection_keeps_the_real_positive_eigenpairs_of_the_general_problem():
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(8, 3))
    S = Y @ Y.T - 0.5 * np.eye(8)
    # symmetric input: the Frobenius projection
    np.testing.assert_allclose(project_psd_released(S), project_psd(S), atol=1e-10)
    A = rng.normal(size=(8, 8))
    M = S + 0.05 * (A - A.T)  # a non-symmetric step result
    w, V = np.linalg.eig(M)
    keep = w.real > 0
    Vr = V[:, keep].real
    expected = (Vr * w.real[keep]) @ Vr.T
    P = project_psd_released(M)
    np.testing.assert_allclose(P, expected, atol=1e-10)
    np.testing.assert_allclose(P, P.T, atol=1e-12)
    assert not np.allclose(P, project_psd(M), atol=1e-6)
    assert project_psd_released(-np.eye(4) - 0.1) is None
    P32 = project_psd_released(M, precision="float32")
    np.testing.assert_allclose(P32, P, atol=1e-4)


def test_descent_stops_at_an_empty_projection_and_returns_the_best_iterate():
    seen = []

    def project(x):
        seen.append(x.copy())
        return None if len(seen) == 3 else x

    res = adaptive_descent(
        lambda x: (float(np.sum((x - 5.0) ** 2)), 2.0 * (x - 5.0)),
        np.zeros(2), StepRule(0.1, max_iter=100), project=project,
    )  # fmt: skip
    assert res.n_iter == 3 and len(res.costs) == 3
    np.testing.assert_allclose(res.x, seen[1])  # the second step's result, cost 3rd lowest
    assert res.cost == pytest.approx(res.costs[-1])


def test_released_gnmds_k_first_empty_projection_returns_the_start_not_zero():
    # a trace weight so large that the first step leaves no positive eigenvalue: the
    # released code stops with its best (the starting) kernel; the symmetric projection
    # returns K = 0, which ties every triplet
    rng = np.random.default_rng(0)
    trip = random_triplets(rng, 12, 80)
    common = dict(form="K", loss_weight=0.01, lam=50.0, init_rank=2, random_state=0)
    released = GNMDS(kform="released", max_iter=20, **common).fit(trip, n=12)
    assert released.n_iter_ == 1
    assert np.abs(released.kernel_).max() > 1e-3
    a, b = kern.sq_dists(released.kernel_, trip, True)
    assert np.mean(a == b) < 0.5
    symmetric = GNMDS(max_iter=20, **common).fit(trip, n=12)
    assert np.abs(symmetric.kernel_).max() == 0.0


def test_best_after_step_records_the_iterate_after_the_lowest_cost():
    target = np.array([1.0, -2.0])

    def f(x):
        return float(np.sum((x - target) ** 2)), 2.0 * (x - target)

    plain = adaptive_descent(f, np.zeros(2), StepRule(0.3, max_iter=4))
    late = adaptive_descent(f, np.zeros(2), StepRule(0.3, max_iter=4), best_after_step=True)
    # the cost falls every iteration: the plain rule returns the 4th iterate, the late
    # record the 5th (the step taken from the 4th)
    assert plain.cost == late.cost == min(plain.costs)
    np.testing.assert_allclose(late.x, plain.x - plain.steps[-1] * f(plain.x)[1])


def test_released_ckl_k_returns_the_kernel_one_step_after_its_best():
    rng = np.random.default_rng(5)
    trip = random_triplets(rng, 15, 200)
    common = dict(form="K", mu=0.05, unit_diagonal=False, init_rank=2, random_state=0)
    start = CKL(max_iter=1, kform="released", learning_rate=1e-12, **common).fit(trip, n=15)
    one = CKL(max_iter=1, kform="released", learning_rate=5.0, **common).fit(trip, n=15)
    sym = CKL(max_iter=1, learning_rate=5.0, **common).fit(trip, n=15)
    assert np.linalg.matrix_rank(sym.kernel_, tol=1e-10) == 2  # the start, x0
    assert not np.allclose(one.kernel_, start.kernel_, atol=1e-6)  # the step's result
    with pytest.raises(ValueError, match="no unit diagonal"):
        CKL(form="K", kform="released").fit(trip, n=15)
    with pytest.raises(ValueError, match="adaptive solver only"):
        STE(form="K", kform="released", solver="accelerated").fit(trip, n=15)


def test_min_iter_keeps_the_step_rule_from_stopping_early():
    rng = np.random.default_rng(6)
    trip = random_triplets(rng, 15, 200)
    # a step so small that no iteration lowers the cost by tol: stop after 5 ...
    quick = GNMDS(learning_rate=1e-12, random_state=0).fit(trip, n=15)
    assert quick.n_iter_ == 6
    # ... unless at least 50 iterations are required (the released GNMDS-X)
    coded = GNMDS(learning_rate=1e-12, min_iter=50, random_state=0).fit(trip, n=15)
    assert coded.n_iter_ == 50
    with pytest.raises(ValueError, match="min_iter"):
        GNMDS(min_iter=-1).fit(trip, n=15)


def test_use_log_false_changes_the_fit_and_is_validated():
    rng = np.random.default_rng(7)
    trip = random_triplets(rng, 20, 300)
    a = TSTE(alpha=1.0, max_iter=50, random_state=0).fit(trip, n=20)
    b = TSTE(alpha=1.0, use_log=False, max_iter=50, random_state=0).fit(trip, n=20)
    assert a.cost_ > 0 > b.cost_  # -sum log p > 0, -sum p < 0
    assert not np.allclose(a.embedding_, b.embedding_)
    with pytest.raises(ValueError, match="use_log"):
        STE(use_log="no").fit(trip, n=20)


# ------------------------------------------------------------- the accelerated solver


def test_accelerated_solver_stops_when_converged_and_not_before():
    target = np.array([3.0, -2.0, 0.5])

    def quadratic(x):  # C = ||x - target||^2 on x >= 0: minimum at (3, 0, 0.5)
        d = x - target
        return float(d @ d), 2.0 * d

    nonneg = lambda x: np.maximum(x, 0.0)  # noqa: E731
    done = accelerated_descent(
        quadratic, np.zeros(3), StepRule(0.1, max_iter=500), project=nonneg
    )
    np.testing.assert_allclose(done.x, [3.0, 0.0, 0.5], atol=1e-3)
    assert done.n_iter < 500  # stopped by the convergence test
    assert np.all(np.diff(done.costs) <= 0)  # C(x) never rises
    # an ill-conditioned run still descending at the budget is not stopped early
    scales = np.array([1.0, 1e-4])
    slow = accelerated_descent(
        lambda x: (float(np.sum(scales * x * x)), 2.0 * scales * x), np.ones(2),
        StepRule(0.4, max_iter=40),
    )  # fmt: skip
    assert slow.n_iter == 40


def test_accelerated_solver_restarts_when_the_extrapolation_leaves_the_domain():
    """C = ||x + 1||^2 is defined on x >= 0 only (NaN elsewhere, as CKL's log of a negative
    distance); the minimum is the boundary x = 0, where an extrapolated point
    x_k + beta (x_k - x_{k-1}) falls outside: the momentum restarts there (no error), and
    a non-finite cost at an accepted (projected) iterate is still an error."""

    def half_space(x):
        if (x < 0).any():
            return np.nan, np.full_like(x, np.nan)
        return float(np.sum((x + 1.0) ** 2)), 2.0 * (x + 1.0)

    nonneg = lambda x: np.maximum(x, 0.0)  # noqa: E731
    start = np.array([5.0, 0.3, 2.0])
    done = accelerated_descent(half_space, start, StepRule(0.1, max_iter=300), project=nonneg)
    np.testing.assert_array_equal(done.x, 0.0)
    assert done.cost == 3.0
    with pytest.raises(FloatingPointError, match="diverged at iteration 1"):
        accelerated_descent(
            half_space, start, StepRule(0.1, max_iter=300), project=lambda x: x - 9
        )


def test_accelerated_k_form_reaches_the_plain_solvers_objective_sooner():
    rng = np.random.default_rng(11)
    points = rng.normal(size=(40, 3))
    trip = planted_triplets(points, 2000, seed=12)
    fits = {
        solver: STE(
            n_components=3, form="K", lam=0.05, solver=solver, max_iter=3000, random_state=0,
            tol=1e-7 if solver == "adaptive" else 1e-9,
        ).fit(trip, n=40)
        for solver in ("adaptive", "accelerated")
    }  # fmt: skip
    plain, fast = fits["adaptive"], fits["accelerated"]
    assert fast.cost_ <= plain.cost_ * (1 + 1e-6)
    reached = np.flatnonzero(fast.cost_history_ <= plain.cost_ * (1 + 1e-6))
    assert reached.size and reached[0] + 1 < plain.n_iter_ / 2
    with pytest.raises(ValueError, match="solver"):
        STE(form="K", solver="newton").fit(trip, n=40)


def test_released_ste_k_estimator_records_the_constant_regulariser_cost():
    rng = np.random.default_rng(8)
    trip = random_triplets(rng, 12, 150)
    common = dict(form="K", lam=0.4, loss_weight=0.6, init_rank=2, max_iter=3, random_state=0)
    coded = STE(kform="released", **common).fit(trip, n=12)
    exact = STE(**common).fit(trip, n=12)
    x0 = STE(kform="released", **{**common, "max_iter": 1}).fit(trip, n=12).kernel_
    a, b = kern.sq_dists(x0, trip, True)
    nll = np.logaddexp(0.0, a - b).sum()
    assert coded.cost_history_[0] == pytest.approx(0.6 * nll + 0.4 * 12, rel=1e-10)
    assert exact.cost_history_[0] == pytest.approx(0.6 * nll + 0.4 * np.trace(x0), rel=1e-10)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_fit_takes_scikit_learns_y_and_n_by_keyword(name):
    """``fit(X, y)`` as scikit-learn calls it: y (labels, say) is ignored, so it is the fit of
    X alone; the number of items goes by keyword only."""
    trip = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0], [3, 2, 1]])
    plain = METHODS[name](random_state=0, max_iter=5).fit(trip)
    with_y = METHODS[name](random_state=0, max_iter=5).fit(trip, np.array([0, 0, 1, 1]))
    assert np.array_equal(plain.embedding_, with_y.embedding_)
    assert METHODS[name](random_state=0, max_iter=5).fit(trip, n=6).embedding_.shape[0] == 6
    with pytest.raises(TypeError):
        METHODS[name](random_state=0, max_iter=5).fit(trip, None, 6)
