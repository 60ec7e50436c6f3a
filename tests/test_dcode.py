"""D-CODE: the CODE likelihood, its Taylor/Gaussian approximation, the Kalman steps, the filter."""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from embedlab.evaluate.ranking import true_author_ranks
from embedlab.methods import dcode as D

from .helpers import central_difference


def _problem(seed=0, A=4, W=5, k=2, scale=0.7):
    rng = np.random.default_rng(seed)
    C = rng.poisson(3.0, size=(A, W)).astype(float)
    p, p_a, p_w = D.empirical_distribution(C)
    theta = rng.normal(scale=scale, size=(A + W, k))
    return rng, C, p, p_a, p_w, theta


def _rel_err(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


# ------------------------------------------------------------------ the exact CODE likelihood


def test_log_likelihood_gradient_matches_finite_differences():
    _, _, p, _, _, theta = _problem()
    grad = D.log_likelihood_gradient(theta, p)
    fd = central_difference(lambda x: D.log_likelihood(x, p), theta, h=1e-5)
    assert _rel_err(grad, fd) < 1e-6


def test_laplacian_precision_is_the_weighted_squared_distance():
    _, _, p, _, _, theta = _problem(seed=1)
    A = p.shape[0]
    sq = ((theta[:A, None, :] - theta[None, A:, :]) ** 2).sum(-1)
    L = D.laplacian_precision(p, 2)
    x = theta.ravel()
    assert np.isclose(x @ L @ x, (p * sq).sum(), rtol=1e-12)
    assert np.allclose(L, L.T)


def test_taylor_pieces_are_value_gradient_and_hessian_of_Z():
    _, _, _, p_a, p_w, theta = _problem(seed=2)
    A = len(p_a)

    def Z(x):
        return D.partition_function(x[:A], x[A:], p_a, p_w)

    pieces = D.taylor_pieces(theta, p_a, p_w)
    assert np.isclose(pieces.z, Z(theta), rtol=1e-14)
    assert _rel_err(pieces.grad, central_difference(Z, theta, h=1e-5)) < 1e-6
    # Hessian column by column from finite differences of the analytic gradient (eq. 8)
    n = theta.size
    H = np.zeros((n, n))
    for c in range(n):
        e = np.zeros(n)
        e[c] = 1e-5
        gp = D.taylor_pieces(theta + e.reshape(theta.shape), p_a, p_w).grad.ravel()
        gm = D.taylor_pieces(theta - e.reshape(theta.shape), p_a, p_w).grad.ravel()
        H[:, c] = (gp - gm) / 2e-5
    assert _rel_err(pieces.hessian, H) < 1e-6


# ------------------------------------------------------------------ the Taylor approximation


def _errors(seed, scales):
    rng, _, _, p_a, p_w, theta = _problem(seed=seed)
    A = len(p_a)
    pieces = D.taylor_pieces(theta, p_a, p_w)
    direction = rng.normal(size=theta.shape)
    z_err, logz_err, predicted = [], [], []
    for s in scales:
        x = theta + s * direction
        Z = D.partition_function(x[:A], x[A:], p_a, p_w)
        z_err.append(abs(D.partition_function_taylor(x, pieces) - Z))
        logz_err.append(D.log_partition_taylor(x, pieces) - np.log(Z))
        predicted.append((Z - pieces.z) ** 2 / (2 * pieces.z**2))
    return np.array(z_err), np.array(logz_err), np.array(predicted), pieces, theta


def test_taylor_Z_error_is_third_order():
    scales = 1e-2 / 2.0 ** np.arange(4)
    z_err, _, _, pieces, theta = _errors(3, scales)
    assert D.partition_function_taylor(theta, pieces) == pytest.approx(pieces.z, rel=1e-15)
    ratios = z_err[:-1] / z_err[1:]
    assert np.all((ratios > 7.0) & (ratios < 9.0)), ratios  # halving delta divides by 8


def test_taylor_log_Z_error_is_second_order_from_eq_6():
    """log Z ~ lambda Z~ - 1 - log lambda (eq. 6) drops -(Z-z)^2 / 2z^2: an O(delta^2) error."""
    scales = 1e-2 / 2.0 ** np.arange(4)
    _, logz_err, predicted, pieces, theta = _errors(4, scales)
    assert D.log_partition_taylor(theta, pieces) == pytest.approx(np.log(pieces.z), abs=1e-15)
    ratios = np.abs(logz_err[:-1] / logz_err[1:])
    assert np.all((ratios > 3.5) & (ratios < 4.5)), ratios  # halving delta divides by 4
    # the error is the dropped second-order term of log, up to O(delta^3)
    residual = np.abs(logz_err - predicted)
    assert np.all(residual < 0.1 * predicted)
    assert np.all(residual[:-1] / residual[1:] > 7.0)
    assert np.all(logz_err > 0)  # log is concave: its tangent lies above it


def test_approximate_log_likelihood_has_the_exact_gradient_at_the_expansion_point():
    _, _, p, _, _, theta = _problem(seed=5)
    exact = central_difference(lambda x: D.log_likelihood(x, p), theta, h=1e-5)
    approx = central_difference(lambda x: D.approximate_log_likelihood(x, p, theta), theta, h=1e-5)
    assert _rel_err(approx, exact) < 1e-6
    # ...and eq. (13)'s canonical parameters describe that same quadratic
    eta, lam = D.observation_canonical(p, theta)
    assert _rel_err((eta - lam @ theta.ravel()).reshape(theta.shape), exact) < 1e-6
    assert D.approximate_log_likelihood(theta, p, theta) == pytest.approx(
        D.log_likelihood(theta, p), abs=1e-13
    )


def test_observation_canonical_is_the_quadratic_of_the_approximation():
    rng, _, p, _, _, theta = _problem(seed=6)
    eta, lam = D.observation_canonical(p, theta)
    assert np.allclose(lam, lam.T)
    base = D.approximate_log_likelihood(theta, p, theta)
    for _ in range(3):
        x = theta + rng.normal(scale=0.5, size=theta.shape)
        quad = eta @ (x - theta).ravel() - 0.5 * (
            x.ravel() @ lam @ x.ravel() - theta.ravel() @ lam @ theta.ravel()
        )
        assert D.approximate_log_likelihood(x, p, theta) - base == pytest.approx(quad, rel=1e-9)


def test_observation_precision_is_translation_invariant_and_indefinite_near_collapse():
    _, _, p, _, _, theta = _problem(seed=7, scale=0.05)
    _, lam = D.observation_canonical(p, theta)
    shift = np.tile([1.0, 0.0], theta.shape[0])
    assert np.abs(lam @ shift).max() < 1e-12
    assert np.linalg.eigvalsh(lam)[0] < -1e-3  # the -log Z repulsion: why the PD projection


# ------------------------------------------------------------------ Gaussian steps


def test_nearest_positive_definite():
    rng = np.random.default_rng(8)
    M = rng.normal(size=(6, 6))
    M = M + M.T
    floor = 0.1
    P, raised = D.nearest_positive_definite(M, floor)
    w = np.linalg.eigvalsh(M)
    assert raised == np.count_nonzero(w < floor) > 0
    assert np.allclose(P, P.T)
    assert np.linalg.eigvalsh(P)[0] >= floor - 1e-12
    # eigenvectors kept, eigenvalues clipped: the Frobenius-nearest such matrix
    assert np.allclose(np.sort(np.linalg.eigvalsh(P)), np.maximum(w, floor))
    for _ in range(50):
        Q = P + 0.05 * rng.normal(size=P.shape)
        Q = Q + Q.T - P  # a symmetric perturbation
        if np.linalg.eigvalsh(Q)[0] >= floor:
            assert np.linalg.norm(M - P) <= np.linalg.norm(M - Q) + 1e-12
    pd = np.diag([1.0, 2.0, 3.0])
    same, none = D.nearest_positive_definite(pd, floor)
    assert none == 0 and np.allclose(same, pd)
    clipped, one = D.nearest_positive_definite(np.diag([-2.0, 0.5]), 0.01)
    assert one == 1 and np.allclose(clipped, np.diag([0.01, 0.5]))
    with pytest.raises(ValueError, match="floor"):
        D.nearest_positive_definite(pd, 0.0)


def test_project_observation_keeps_the_gradient_at_the_expansion_point():
    _, _, p, _, _, theta = _problem(seed=9, scale=0.05)
    eta, lam = D.observation_canonical(p, theta)
    eta2, lam2, raised = D.project_observation(eta, lam, theta, 1e-6)
    x0 = theta.ravel()
    assert raised > 0
    assert np.linalg.eigvalsh(lam2)[0] > 0
    assert np.allclose(eta2 - lam2 @ x0, eta - lam @ x0, atol=1e-12)


def test_kalman_conditioning_matches_the_closed_form_on_a_linear_gaussian_toy():
    rng = np.random.default_rng(10)
    n, m = 4, 3
    L = rng.normal(size=(n, n))
    Sigma = L @ L.T + 0.5 * np.eye(n)
    mu = rng.normal(size=n)
    H = rng.normal(size=(m, n))
    R = np.diag(rng.uniform(0.2, 1.0, size=m))
    y = rng.normal(size=m)
    # closed form (gain form): K = Sigma H^T (H Sigma H^T + R)^-1
    K = Sigma @ H.T @ np.linalg.inv(H @ Sigma @ H.T + R)
    mean = mu + K @ (y - H @ mu)
    cov = (np.eye(n) - K @ H) @ Sigma
    prior = D.GaussianBelief(mu, Sigma, np.linalg.inv(Sigma))
    Rinv = np.linalg.inv(R)
    post = D.condition(prior, H.T @ Rinv @ y, H.T @ Rinv @ H)
    assert np.allclose(post.mean, mean, atol=1e-10)
    assert np.allclose(post.covariance, cov, atol=1e-10)
    assert np.allclose(post.precision @ post.covariance, np.eye(n), atol=1e-10)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        D.condition(prior, np.zeros(n), -10.0 * np.eye(n))


def test_prediction_adds_the_transition_noise():
    rng = np.random.default_rng(11)
    L = rng.normal(size=(5, 5))
    cov = L @ L.T + np.eye(5)
    belief = D.GaussianBelief(rng.normal(size=5), cov, np.linalg.inv(cov))
    pred = belief.predict(0.3)
    assert np.array_equal(pred.mean, belief.mean)
    assert np.allclose(pred.covariance, cov + 0.3 * np.eye(5))
    assert np.allclose(pred.precision, np.linalg.inv(cov + 0.3 * np.eye(5)))


def test_expected_affinity_matches_numerical_integration():
    m = np.array([0.7, -0.4])
    S = np.array([[0.5, 0.2], [0.2, 0.3]])
    grid = np.linspace(-6, 6, 801)
    X, Y = np.meshgrid(grid, grid, indexing="ij")
    d = np.stack([X - m[0], Y - m[1]], axis=-1)
    Sinv = np.linalg.inv(S)
    density = np.exp(-0.5 * np.einsum("...i,ij,...j->...", d, Sinv, d))
    density /= 2 * np.pi * np.sqrt(np.linalg.det(S))
    numeric = (density * np.exp(-(X**2 + Y**2))).sum() * (grid[1] - grid[0]) ** 2
    closed = np.exp(D.log_expected_affinity(m, S))
    assert closed == pytest.approx(numeric, rel=1e-6)
    assert D.log_expected_affinity(m) == pytest.approx(-(m @ m))
    assert D.log_expected_affinity(m, np.zeros((2, 2))) == pytest.approx(-(m @ m))


def test_log_word_given_author_is_a_normalised_code_conditional():
    rng = np.random.default_rng(12)
    authors, words = rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    p_w = np.array([0.1, 0.2, 0.3, 0.4])
    L = D.log_word_given_author(authors, words, p_w)
    assert np.allclose(np.exp(L).sum(axis=1), 1.0)
    e = np.exp(-((authors[:, None] - words[None]) ** 2).sum(-1)) * p_w
    assert np.allclose(np.exp(L), e / e.sum(axis=1, keepdims=True))
    p_w0 = np.array([0.0, 0.5, 0.5, 0.0])
    L0 = D.log_word_given_author(authors, words, p_w0)
    assert np.isneginf(L0[:, [0, 3]]).all() and np.isfinite(L0[:, [1, 2]]).all()


# ------------------------------------------------------------------ the estimator


def _sequence(T=6, A=4, W=5, seed=13):
    rng = np.random.default_rng(seed)
    return [sp.csr_matrix(rng.poisson(2.0, size=(A, W)).astype(float)) for _ in range(T)]


def _assert_spd(blocks):
    assert np.allclose(blocks, np.swapaxes(blocks, -1, -2))
    assert np.linalg.eigvalsh(blocks).min() > 0


def test_filter_posteriors_are_symmetric_positive_definite():
    counts = _sequence()
    m = D.DCODE(random_state=0).fit(counts)
    T, A, W = len(counts), 4, 5
    assert m.means_.shape == (T, A + W, 2) and np.isfinite(m.means_).all()
    for blocks in (m.covariances_, m.conditional_covariances_, m.difference_covariances_):
        _assert_spd(blocks)
    assert np.linalg.eigvalsh(m.covariance_)[0] > 0
    assert np.allclose(m.covariance_, m.covariance_.T)
    # every step conditioned at the posterior mode: one more linearisation does not move it
    assert (m.n_iter_ >= 1).all() and m.mode_residual_.max() < 1e-3
    assert np.array_equal(m.embedding_, m.means_[-1])
    # the conditional covariance never exceeds the marginal one (Schur complement)
    gap = m.covariances_ - m.conditional_covariances_
    assert np.linalg.eigvalsh(gap).min() > -1e-10


def test_filter_is_deterministic_and_modes_share_the_filter():
    counts = _sequence()
    a = D.DCODE(random_state=3).fit(counts)
    b = D.make_variant("dcode_mle", random_state=3).fit([c.toarray() for c in counts])
    assert np.array_equal(a.means_, b.means_)
    La, Lb = a.log_word_given_author(), b.log_word_given_author()
    assert not np.allclose(La, Lb)  # the posterior spread changes the predictions
    assert np.array_equal(a.log_word_given_author(mode="mle"), Lb)  # one fit serves both
    A = 4
    pos = b.means_[-1]
    assert np.allclose(Lb, D.log_word_given_author(pos[:A], pos[A:], b.word_marginals_[-1]))


def test_predictive_distribution_adds_the_transition_noise_to_every_difference():
    counts = _sequence()
    m = D.DCODE(random_state=3, transition_var=0.7).fit(counts)
    A, k = 4, 2
    pos, cov = m.means_[-1], m.difference_covariances_[-1] + 2 * 0.7 * np.eye(k)
    expected = D.log_word_given_author(pos[:A], pos[A:], m.word_marginals_[-1], cov)
    assert np.allclose(m.log_word_given_author(horizon=1), expected)
    assert not np.allclose(m.log_word_given_author(horizon=1), m.log_word_given_author())
    # the means do not move: the MLE prediction is the same one step ahead
    assert np.array_equal(
        m.log_word_given_author(mode="mle", horizon=1), m.log_word_given_author(mode="mle")
    )
    static = D.make_variant("static_dcode", random_state=0).fit(counts)
    with pytest.raises(ValueError, match="horizon"):
        static.log_word_given_author(horizon=1)


def test_conditioning_at_the_mode_is_the_fixed_point_of_iterated_linearisation():
    """The mode found by L-BFGS is where one more expansion of (13) leaves the mean: the
    exact log posterior (eq. 2 + the prior) has zero gradient there and is higher than at
    the paper's single expansion at the predicted mean."""
    counts = _sequence()
    p, _, _ = D.empirical_distribution(counts[-1].toarray())
    init = np.random.default_rng(0).normal(scale=0.1, size=(9, 2))
    N = counts[-1].sum()

    def log_posterior_and_gradient(x):
        d = (x - init).ravel()
        value, grad = D.log_likelihood_and_gradient(x, p)
        return N * value - 0.5 * d @ d / 100.0, N * grad.ravel() - d / 100.0

    mode = D.make_variant("static_dcode", initial_var=100.0, random_state=0, tol=1e-9).fit(counts)
    single = D.make_variant(
        "static_dcode", initial_var=100.0, random_state=0, conditioning="single"
    ).fit(counts)
    assert mode.means_.shape[0] == 1 and single.n_iter_[0] == 1
    value, grad = log_posterior_and_gradient(mode.embedding_)
    _, grad_at_init = log_posterior_and_gradient(init)
    assert np.abs(grad).max() < 1e-6 * np.abs(grad_at_init).max()
    assert mode.mode_residual_[0] < 1e-4 < single.mode_residual_[0]
    assert value > log_posterior_and_gradient(single.embedding_)[0]
    # only the last matrix matters
    a = D.make_variant("static_dcode", random_state=0).fit(counts)
    b = D.make_variant("static_dcode", random_state=0).fit(counts[-1:])
    assert np.array_equal(a.means_, b.means_)


def test_empty_step_keeps_the_prediction():
    counts = _sequence(T=3)
    counts[1] = sp.csr_matrix(counts[1].shape)
    m = D.DCODE(random_state=0, transition_var=0.5).fit(counts)
    assert np.array_equal(m.means_[1], m.means_[0])
    assert np.allclose(m.covariances_[1], m.covariances_[0] + 0.5 * np.eye(2))
    with pytest.raises(ValueError, match="last count matrix is all zero"):
        D.DCODE(static=True).fit(counts[:2])


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([np.array([[1.0, np.nan], [0.0, 1.0]])], r"counts\[0\]: non-finite count at .*\[0, 1\]"),
        ([np.array([[1.0, -1.0], [0.0, 1.0]])], r"counts\[0\]: negative count"),
        ([np.ones((2, 3)), np.ones((3, 3))], r"counts\[1\]: shape \(3, 3\) differs"),
        ([], "no time steps"),
    ],
)
def test_bad_counts_fail_early(counts, message):
    with pytest.raises(ValueError, match=message):
        D.DCODE().fit(counts)


def test_bad_parameters_fail_early():
    counts = _sequence(T=2)
    with pytest.raises(ValueError, match="mode"):
        D.DCODE(mode="bayes").fit(counts)
    with pytest.raises(ValueError, match="transition_var"):
        D.DCODE(transition_var=-1.0).fit(counts)
    with pytest.raises(ValueError, match="unknown D-CODE variant"):
        D.make_variant("dynamic")
    with pytest.raises(ValueError, match="conditioning"):
        D.DCODE(conditioning="twice").fit(counts)
    with pytest.raises(ValueError, match="tol"):
        D.DCODE(tol=0.0).fit(counts)
    with pytest.raises(ValueError, match="max_iter"):
        D.DCODE(max_iter=0).fit(counts)


# ------------------------------------------------------------------ Fig. 3: gradual vs abrupt


def swap_sequence(seed, T=40, start=10, end=30, high=30.0, low=3.0, background=9.0):
    """Authors X1-3, Y1-3; words A1-3 and background words B1-3 (Poisson counts).

    E[C(X, A)] goes linearly from ``high`` to ``low`` over steps start..end and E[C(Y, A)] the
    other way; every author uses every B word ``background`` times on average. (Without the B
    words the counts would be rank one, p_ij = p_i p_j, which CODE explains by the marginals
    alone: no X/Y difference would reach the embedding.)
    """
    rng = np.random.default_rng(seed)
    w = np.clip((np.arange(T) - start) / (end - start), 0.0, 1.0)
    out = []
    for t in range(T):
        rate = np.full((6, 6), background)
        rate[:3, :3] = high + (low - high) * w[t]
        rate[3:, :3] = low + (high - low) * w[t]
        out.append(rng.poisson(rate).astype(float))
    return out


def average_rank_of_x(model, T):
    """Average Naive Bayes rank (uniform prior) of X1..X3 among the 6 authors given A1..A3."""
    words = np.array([[1.0, 1, 1, 0, 0, 0]])
    return np.array(
        [
            true_author_ranks(model.log_word_given_author(t), words, [[0, 1, 2]]).mean()
            for t in range(T)
        ]
    )


def test_synthetic_rank_moves_gradually_with_distributions_and_abruptly_with_means():
    """Fig. 3D under the per-token reading (eq. 2 as printed, the paper's single expansion):
    the average rank of X given the A words, with (D-CODE) and without (MLE) the posterior
    spread. Same filter, 32 noise seeds; the effect is a tendency, not a rule for every seed,
    so the test compares averages over the seeds. (With count-weighted observations the
    posterior of this sequence is too narrow for the spread to matter: see the README.)"""
    T, seeds = 40, range(32)
    trajectories = {"full": [], "mle": []}
    for seed in seeds:
        model = D.DCODE(
            transition_var=0.1,
            initial_var=100.0,
            likelihood="per_token",
            conditioning="single",
            random_state=seed,
        )
        model.fit(swap_sequence(seed, T=T))
        for mode in trajectories:
            model.mode = mode
            trajectories[mode].append(average_rank_of_x(model, T))
    stats = {}
    for mode, curves in trajectories.items():
        curves = np.array(curves)
        stats[mode] = {
            "max_jump": np.abs(np.diff(curves, axis=1)).max(axis=1).mean(),
            "steps_between": ((curves > 2.2) & (curves < 4.8)).sum(axis=1).mean(),
            "start": curves[:, :8].mean(),
            "end": curves[:, -8:].mean(),
        }
        print(mode, {k: round(float(v), 2) for k, v in stats[mode].items()})
        print(mode, "mean over seeds:", " ".join(f"{r:.2f}" for r in curves.mean(axis=0)))
        print(mode, "seed 0:        ", " ".join(f"{r:.2f}" for r in curves[0]))
    for mode in stats:  # both follow the trend: X ranked first early, last late
        assert stats[mode]["start"] < 2.3 and stats[mode]["end"] > 4.7
    assert stats["full"]["max_jump"] < stats["mle"]["max_jump"]
    assert stats["full"]["steps_between"] > stats["mle"]["steps_between"]


def test_fit_of_paper_size_is_finite_and_positive_definite():
    """40 authors x 348 words x 13 steps (Table 2's largest setting) fits to finite means and
    positive-definite covariances (its time is printed, not asserted: see benchmarks/)."""
    rng = np.random.default_rng(14)
    counts = [sp.csr_matrix(rng.poisson(0.3, size=(40, 348)).astype(float)) for _ in range(13)]
    start = time.process_time()
    model = D.DCODE(random_state=0).fit(counts)
    print(f"D-CODE fit 40 x 348 x 13: {time.process_time() - start:.2f} s CPU")
    assert np.isfinite(model.means_).all()
    assert (np.linalg.eigvalsh(model.covariances_) > 0).all()


# ------------------------------------------------------------------ weighting of the observation


def _two_topic_sequence(T=3, tokens=4000, seed=5):
    """Authors 0-2 write words 0-3, authors 3-5 words 4-7; ``tokens`` tokens per step."""
    rng = np.random.default_rng(seed)
    A, W = 6, 8
    rate = np.full((A, W), 0.05)
    rate[:3, :4] = rate[3:, 4:] = 1.0
    return [rng.multinomial(tokens, (rate / rate.sum()).ravel()).reshape(A, W) for _ in range(T)]


def _spread(x):
    return float(np.sqrt(((x - x.mean(axis=0)) ** 2).sum(axis=1).mean()))


def test_counts_likelihood_is_the_per_token_one_times_the_number_of_tokens():
    # sum_ij C_ij log p(i, j) = N (eq. 2): eta and Lambda of (13) are scaled by N = sum C
    C = _two_topic_sequence(T=1)[0].astype(float)
    p, _, _ = D.empirical_distribution(C)
    kw = dict(initial_var=10.0, init_scale=0.5, eigenvalue_floor=1e-3, random_state=2)
    model = D.DCODE(likelihood="counts", conditioning="single", **kw).fit([C])
    init = np.random.default_rng(2).normal(scale=0.5, size=(14, 2))
    eta, lam = D.observation_canonical(p, init)
    eta, lam, _ = D.project_observation(C.sum() * eta, C.sum() * lam, init, 1e-3)
    precision = np.eye(28) / 10.0 + lam
    mean = np.linalg.solve(precision, init.ravel() / 10.0 + eta)
    assert np.allclose(np.linalg.inv(model.covariance_), precision, rtol=1e-6, atol=1e-6)
    assert np.allclose(model.means_[0].ravel(), mean, rtol=1e-6, atol=1e-8)
    # the per-token reading: eq. (2) as printed, the evidence of one token
    weak = D.DCODE(likelihood="per_token", conditioning="single", **kw).fit([C])
    eta1, lam1 = D.observation_canonical(p, init)
    eta1, lam1, _ = D.project_observation(eta1, lam1, init, 1e-3)
    assert np.allclose(
        np.linalg.inv(weak.covariance_), np.eye(28) / 10.0 + lam1, rtol=1e-6, atol=1e-6
    )


def _own_word_distance_ratio(positions, counts):
    """Mean distance of each author to its 2 most-used words over that to its 2 least-used."""
    A = counts[0].shape[0]
    total = np.sum(counts, axis=0)
    own, far = np.argsort(-total, axis=1)[:, :2], np.argsort(total, axis=1)[:, :2]
    authors = positions[:A, None]
    near = np.linalg.norm(authors - positions[A + own], axis=-1).mean()
    return near / np.linalg.norm(authors - positions[A + far], axis=-1).mean()


def test_count_weighted_means_move_toward_the_data_and_per_token_means_do_not():
    """Issue check: with N_t x eq. (2) each author's mean moves from its random start next to
    its most-used words; the per-token model (the same evidence divided by N_t) leaves the
    means at their start. Fails if the count weighting is removed."""
    counts = _two_topic_sequence(T=4, tokens=3000)
    kw = dict(transition_var=0.01, initial_var=0.1, init_scale=0.3, random_state=0)
    start = np.random.default_rng(0).normal(scale=0.3, size=(14, 2))
    strong = D.DCODE(likelihood="counts", **kw).fit(counts)
    weak = D.DCODE(likelihood="per_token", **kw).fit(counts)
    assert _own_word_distance_ratio(start, counts) > 0.7
    for t in range(len(counts)):
        assert _own_word_distance_ratio(strong.means_[t], counts) < 0.3
        assert _own_word_distance_ratio(weak.means_[t], counts) > 0.9
    assert np.abs(strong.means_[-1] - start).max() > 1.0
    assert np.abs(weak.means_[-1] - start).max() < 0.05


def test_counts_likelihood_moves_the_means_to_the_count_structure():
    counts = _two_topic_sequence()
    kw = dict(transition_var=0.1, initial_var=10.0, random_state=0)
    init = np.random.default_rng(0).normal(scale=0.1, size=(14, 2))
    strong = D.DCODE(likelihood="counts", **kw).fit(counts)
    # thousands of tokens spread the means out from their near-origin start
    assert _spread(strong.means_[-1]) > 5 * _spread(init)
    # ... with every author nearer to each of its own words than to any of the other group's
    x = strong.means_[-1]
    d = ((x[:6, None] - x[None, 6:]) ** 2).sum(-1)
    for i in range(6):
        own = slice(0, 4) if i < 3 else slice(4, 8)
        other = slice(4, 8) if i < 3 else slice(0, 4)
        assert d[i, own].max() < d[i, other].min()
    # and it is (within 1 % of the spread) a mode of the exact log posterior of every step
    assert strong.mode_residual_.max() < 1e-2 * _spread(x)


def test_log_likelihood_stays_finite_for_far_apart_positions():
    _, _, p, _, _, theta = _problem()
    far = theta.copy()
    far[4:, 0] += 50.0  # every author-word distance^2 > 1000: Z underflows to 0 in doubles
    value = D.log_likelihood(far, p)
    assert np.isfinite(value)
    # and it is the same number as the direct formula where that one is representable
    delta = theta[:4, None] - theta[None, 4:]
    sq = (delta**2).sum(-1)
    direct = -(p * sq).sum() - np.log(p.sum(1) @ np.exp(-sq) @ p.sum(0))
    assert np.isclose(D.log_likelihood(theta, p), direct, rtol=1e-12)


def test_likelihood_is_checked():
    counts = _sequence(T=2)
    with pytest.raises(ValueError, match="likelihood"):
        D.DCODE(likelihood="empirical").fit(counts)
