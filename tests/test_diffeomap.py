"""Diffeomap: energy and gradient, reduced set, optimiser, flow and estimator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.decomposition import PCA

from embedlab.evaluate.knn import loo_1nn_errors
from embedlab.kernels import diffeomap as diffeomap_kernels
from embedlab.kernels.diffeomap import full_flow_energy, gaussian_kernel, gaussian_kernel_vjp
from embedlab.methods.diffeomap import (
    Diffeomap,
    diffeomap_energy,
    fit_pca_rotation,
    fit_span,
    fit_trajectories,
    select_basis,
    span_energy,
)

from .helpers import central_difference


def random_trajectories(m=12, a=3, p=3, seed=0, spread=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, a))
    steps = spread * rng.standard_normal((p, m, a))
    return np.concatenate([X[None], X[None] + np.cumsum(steps, axis=0)])


def parabola(m=40, seed=0):
    """Noisy points on a bent 1-D curve in 2-D; parameter s orders them along the curve."""
    rng = np.random.default_rng(seed)
    s = np.sort(rng.uniform(-1.0, 1.0, m))
    return np.c_[2.0 * s, s**2] + 0.02 * rng.standard_normal((m, 2)), s


# ----------------------------------------------------------------------------- kernels


@pytest.mark.parametrize("dims", [4, 100], ids=["differences", "inner-products"])
def test_gaussian_kernel_matches_definition(dims):
    rng = np.random.default_rng(dims)
    A, B = rng.standard_normal((7, dims)), rng.standard_normal((5, dims))
    A[2] = B[1]
    sigma = 0.3 * np.sqrt(dims)
    K = gaussian_kernel(A, B, sigma)
    sq = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(K, np.exp(-sq / (2 * sigma**2)), rtol=1e-12, atol=1e-14)
    assert K[2, 1] == pytest.approx(1.0, abs=1e-14)


def test_gaussian_kernel_vjp_matches_finite_differences():
    rng = np.random.default_rng(3)
    A, B, W = rng.standard_normal((7, 4)), rng.standard_normal((5, 4)), rng.random((7, 5))
    sigma = 0.8
    K = gaussian_kernel(A, B, sigma)
    gA, gB = gaussian_kernel_vjp(W, K, A, B, sigma)
    h = 1e-6
    for X, g, which in ((A, gA, 0), (B, gB, 1)):
        num = np.zeros_like(X)
        for idx in np.ndindex(X.shape):
            Xp, Xm = X.copy(), X.copy()
            Xp[idx] += h
            Xm[idx] -= h
            args_p = (Xp, B) if which == 0 else (A, Xp)
            args_m = (Xm, B) if which == 0 else (A, Xm)
            num[idx] = (
                np.sum(W * gaussian_kernel(*args_p, sigma))
                - np.sum(W * gaussian_kernel(*args_m, sigma))
            ) / (2 * h)
        np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-9)


# ----------------------------------------------------------------------------- energy


@pytest.mark.parametrize(
    ("basis", "eps"),
    [(None, 0.0), (None, 1.0), ("half", 1.0), ("half", 0.1), ("all", 0.5)],
    ids=["full", "full-eps1", "n=6", "n=6-eps0.1", "n=m"],
)
def test_energy_gradient_matches_central_differences(basis, eps):
    T = random_trajectories()
    m = T.shape[1]
    index = {None: None, "half": np.array([0, 2, 3, 7, 9, 11]), "all": np.arange(m)}[basis]

    def energy(T):
        return diffeomap_energy(T, sigma=1.0, lam=0.7, n_components=1, basis=index, eps=eps)

    parts = energy(T)
    assert parts.kinetic > 0 and parts.off_subspace > 0
    numeric = central_difference(lambda t: energy(t).energy, T, h=1e-5)
    scale = np.abs(numeric).max()
    assert np.abs(parts.grad - numeric).max() / scale < 1e-6


def test_reduced_set_with_every_point_equals_full_energy():
    T = random_trajectories(seed=1)
    m = T.shape[1]
    full = diffeomap_energy(T, sigma=0.9, lam=0.5, n_components=2, basis=None, eps=0.3)
    reduced = diffeomap_energy(T, sigma=0.9, lam=0.5, n_components=2, basis=np.arange(m), eps=0.3)
    assert abs(reduced.energy - full.energy) <= 1e-8 * full.energy
    np.testing.assert_allclose(
        reduced.grad, full.grad, rtol=1e-6, atol=1e-8 * np.abs(full.grad).max()
    )
    # and a strict subset is a different (Nystrom-approximated) energy
    subset = diffeomap_energy(T, sigma=0.9, lam=0.5, n_components=2, basis=np.arange(6), eps=0.3)
    assert abs(subset.energy - full.energy) > 1e-3 * full.energy


def test_reduced_set_with_every_point_tends_to_the_exact_energy_as_eps_vanishes():
    """n = m, eps -> 0: (K K^-1 K + eps 1)^-1 -> K^-1, the paper's full-set energy."""
    T = random_trajectories(seed=1)
    exact = diffeomap_energy(T, sigma=0.9, lam=0.5, n_components=2, basis=None, eps=0.0).energy
    gaps = [
        abs(diffeomap_energy(T, 0.9, 0.5, 2, basis=np.arange(T.shape[1]), eps=eps).energy - exact)
        / exact
        for eps in (1e-2, 1e-4, 1e-6)
    ]
    assert gaps[0] > 1e-3  # eps matters at 1e-2, so the limit below is not trivial
    assert gaps[1] < 0.1 * gaps[0] and gaps[2] < 0.1 * gaps[1] and gaps[2] < 1e-4


def test_velocity_outside_the_span_of_the_basis_is_charged():
    """A velocity with K_nm V = 0 costs ||V||^2 / eps (the rank-n form charged it nothing)."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((15, 3))
    basis = np.array([1, 4, 8, 11])
    Kmn = gaussian_kernel(X, X[basis], 1.0)
    Q, _ = np.linalg.qr(Kmn, mode="complete")
    V = Q[:, len(basis) :] @ rng.standard_normal((15 - len(basis), 3))  # orthogonal to K_mn
    assert np.abs(Kmn.T @ V).max() < 1e-12
    T = np.stack([X, X + V])  # p = 1: V_0 = V
    for eps in (1.0, 0.25):
        kinetic = diffeomap_energy(T, 1.0, 0.0, 3, basis=basis, eps=eps).kinetic
        assert kinetic == pytest.approx(np.sum(V * V) / eps, rel=1e-10)
        assert kinetic > 0.1


def test_energy_parts_at_identity_flow():
    T = np.repeat(random_trajectories(p=0)[0][None], 4, axis=0)
    parts = diffeomap_energy(T, sigma=1.0, lam=2.0, n_components=1, basis=np.arange(5))
    assert parts.kinetic == 0.0
    assert parts.off_subspace == pytest.approx(np.sum(T[-1][:, 1:] ** 2))
    assert parts.energy == pytest.approx(2.0 * parts.off_subspace)
    np.testing.assert_array_equal(parts.grad[:-1], 0.0)


# ----------------------------------------------------------------------------- optimiser


def test_without_penalty_the_identity_flow_is_kept_and_regained():
    X = random_trajectories(p=0, seed=2)[0]
    Z = fit_pca_rotation(X).apply(X)
    p = 3
    kept = fit_trajectories(Z, n_components=1, sigma=0.5, lam=0.0, p=p, basis=None, max_iter=50)
    assert kept.optimum.n_iter == 0 and kept.parts.energy == 0.0
    np.testing.assert_array_equal(kept.trajectories, np.repeat(Z[None], p + 1, axis=0))

    init = Z[None] + 0.05 * np.random.default_rng(0).standard_normal((p,) + Z.shape)
    start = diffeomap_energy(np.concatenate([Z[None], init]), 0.5, 0.0, 1).energy
    back = fit_trajectories(
        Z, n_components=1, sigma=0.5, lam=0.0, p=p, basis=None, max_iter=300, init=init
    )
    assert start > 0.1 and back.parts.energy < 1e-12 * start
    np.testing.assert_allclose(back.trajectories, np.repeat(Z[None], p + 1, axis=0), atol=1e-8)

    # reduced set: every velocity is charged, so the identity is regained there too
    basis = np.arange(0, len(Z), 2)
    reduced = fit_trajectories(
        Z, n_components=1, sigma=0.5, lam=0.0, p=p, basis=basis, max_iter=300, init=init
    )
    assert reduced.parts.energy < 1e-12 * start
    np.testing.assert_allclose(reduced.trajectories, np.repeat(Z[None], p + 1, axis=0), atol=1e-6)


@pytest.mark.parametrize(
    ("optimizer", "formulation"), [("lbfgs", "span"), ("cg", "span"), ("lbfgs", "charged")]
)
def test_flow_separates_two_stacked_sheets_that_pca_overlays(optimizer, formulation):
    """Two classes on parallel sheets z = +-0.5 of a 6 x 3 box: PCA keeps (x, y), overlaying
    them; flattening z by a diffeomorphism cannot collide the sheets, so it pulls them apart."""
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1], 40)
    X = np.c_[
        rng.uniform(-3, 3, 80),
        rng.uniform(-1.5, 1.5, 80),
        np.where(labels == 0, 0.5, -0.5) + 0.05 * rng.standard_normal(80),
    ]
    pca_errors = loo_1nn_errors(PCA(n_components=2).fit_transform(X), labels)
    model = Diffeomap(
        sigma=0.3, lam=10.0, p=5, n_basis=40, max_iter=200, random_state=0, optimizer=optimizer,
        formulation=formulation,
    ).fit(X)  # fmt: skip
    # span: 40 basis functions of width 0.3 for 80 points leave some of the sheet offset
    # (free end points flatten further, but are not what the field does)
    flat = {"span": 0.05, "charged": 0.01}[formulation]
    assert model.off_subspace_energy_ < flat * np.sum(model.trajectories_[0][:, 2:] ** 2)
    assert pca_errors >= 30
    assert loo_1nn_errors(model.embedding_, labels) <= 0.7 * pca_errors
    if formulation == "span":  # and the map is the learned flow's image of the data
        assert loo_1nn_errors(model.transform(X), labels) <= 0.7 * pca_errors


@pytest.fixture(scope="module")
def curve_fit():
    X, s = parabola()
    model = Diffeomap(
        n_components=1, sigma=0.3, lam=10.0, p=5, n_basis=20, max_iter=300, random_state=0
    )
    return X, s, model, model.fit_transform(X)


def test_diffeomap_flattens_a_bent_curve(curve_fit):
    X, s, model, Y = curve_fit
    L0 = np.sum(model.trajectories_[0][:, 1:] ** 2)
    assert model.off_subspace_energy_ < 0.05 * L0
    assert model.energy_ < 10.0 * L0  # == lam * L at the start
    assert model.energy_trace_[-1] == pytest.approx(model.energy_)
    assert np.all(np.diff(model.energy_trace_) <= 1e-12 * model.energy_trace_[0])
    assert abs(spearmanr(Y[:, 0], s).statistic) > 0.99  # order along the curve is kept


def test_learned_flow_is_invertible_on_the_data(curve_fit):
    X, _, model, _ = curve_fit
    end = model.flow(X)
    np.testing.assert_allclose(model.inverse_flow(end), X, atol=1e-9)
    # the inverse is not a formality: starting from other end points gives other inputs
    moved = model.inverse_flow(end + 0.05)
    assert np.abs(moved - X).min() > 1e-3


def test_transform_of_training_points_reproduces_the_fitted_trajectories():
    # full set: forward Euler with the p steps is exactly the discretisation of V_k
    X, _ = parabola(m=16, seed=1)
    model = Diffeomap(
        n_components=1, sigma=0.4, lam=5.0, p=3, n_basis=16, max_iter=60, eps=0.0,
        formulation="charged",
    ).fit(X)  # fmt: skip
    assert model.basis_.size == 16 and model.flow_coef_.shape == (3, 16, 2)
    displacement = np.abs(model.trajectories_[-1] - model.trajectories_[0]).max()
    assert displacement > 0.1
    np.testing.assert_allclose(model.flow(X), model.trajectories_[-1], atol=1e-7 * displacement)
    np.testing.assert_allclose(model.transform(X), model.embedding_, atol=1e-7 * displacement)


def test_charged_end_points_are_not_the_flow_of_the_data():
    # charged reduced set: the flow follows K_mn beta_k, the charged part of V_k; the fitted
    # Phi_p also carries the residual charged at 1/eps, so the two agree only approximately
    X, _ = parabola()
    model = Diffeomap(
        n_components=1, sigma=0.3, lam=10.0, p=5, n_basis=20, max_iter=300, random_state=0,
        formulation="charged",
    )  # fmt: skip
    Y = model.fit_transform(X)
    displacement = np.abs(model.trajectories_[-1] - model.trajectories_[0]).max()
    gap = np.abs(model.transform(X) - Y).max()
    assert 1e-8 * displacement < gap < 0.1 * displacement


# ----------------------------------------------------------------------------- estimator


def test_estimator_is_deterministic_and_uses_a_seeded_basis():
    X, _ = parabola(m=30, seed=4)
    kwargs = dict(n_components=1, sigma=0.3, lam=1.0, p=3, n_basis=10, max_iter=20)
    a = Diffeomap(random_state=7, **kwargs).fit(X)
    b = Diffeomap(random_state=7, **kwargs).fit(X)
    c = Diffeomap(random_state=8, **kwargs).fit(X)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    np.testing.assert_array_equal(a.basis_, b.basis_)
    assert not np.array_equal(a.basis_, c.basis_)
    assert a.trajectories_.shape == (4, 30, 2) and a.n_iter_ == 20
    assert a.pca_.rotation.shape == (2, 2) and a.pca_.mean.shape == (2,)


def test_pca_rotation_is_lossless_and_sorted():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((50, 4)) * [0.5, 3.0, 1.0, 2.0] + 7.0
    pca = fit_pca_rotation(X)
    Z = pca.apply(X)
    np.testing.assert_allclose(pca.invert(Z), X, atol=1e-12)
    variances = Z.var(axis=0)
    assert np.all(np.diff(variances) < 0)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)


def test_basis_uses_distinct_points_and_clips_with_a_warning():
    X = np.repeat(np.arange(10.0)[:, None], 2, axis=1)
    X = np.vstack([X, X[:3]])  # 13 points, 10 distinct
    rng = np.random.default_rng(0)
    basis = select_basis(X, 5, rng)
    assert len(np.unique(X[basis], axis=0)) == 5
    with pytest.warns(UserWarning, match="n_basis=20 exceeds the 10 distinct points"):
        basis = select_basis(X, 20, rng)
    assert len(basis) == 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert select_basis(X[:10], 10, rng) is None  # every point, all distinct: full set


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sigma": 0.0}, "sigma=0.0"),
        ({"lam": -1.0}, "lam=-1.0"),
        ({"p": 0}, "p=0"),
        ({"n_basis": 0}, "n_basis=0"),
        ({"n_components": 2}, "n_components=2 must be below the number of principal axes of X: 2"),
        ({"optimizer": "adam"}, "optimizer='adam'"),
        (
            {"eps": 0.0, "n_basis": 5, "formulation": "charged"},
            "a reduced set needs eps > 0, got eps=0.0",
        ),
        ({"formulation": "free"}, "formulation='free'"),
    ],
)
def test_bad_parameters_are_rejected(params, message):
    X, _ = parabola(m=10)
    kwargs = {"n_components": 1, **params}
    with pytest.raises(ValueError, match=message):
        Diffeomap(**kwargs).fit(X)


def test_bad_input_is_rejected():
    X, _ = parabola(m=10)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"1 NaN/inf values \(first at row 3, column 1"):
        Diffeomap(n_components=1).fit(X)
    model = Diffeomap(n_components=1, p=2, n_basis=5, max_iter=2).fit(parabola(m=10)[0])
    with pytest.raises(ValueError, match="X has 3 features, but Diffeomap is expecting 2"):
        model.transform(np.zeros((2, 3)))


# ----------------------------------------------------------------------------- span formulation


def span_problem(m=10, r=3, p=3, n=4, seed=0, scale=0.5):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((m, r))
    basis = np.sort(rng.choice(m, size=n, replace=False))
    return Z, basis, scale * rng.standard_normal((p, n, r))


@pytest.mark.parametrize("n", [4, 10], ids=["n=4", "n=m"])
def test_span_energy_gradient_matches_central_differences(n):
    Z, basis, beta = span_problem(n=n)

    def energy(b):
        return span_energy(Z, b, sigma=0.9, lam=0.7, n_components=1, basis=basis)

    parts = energy(beta)
    assert parts.kinetic > 0 and parts.off_subspace > 0
    numeric = central_difference(lambda b: energy(b).energy, beta, h=1e-6)
    assert np.abs(parts.grad - numeric).max() / np.abs(numeric).max() < 1e-6


def test_span_energy_with_every_point_is_the_full_set_energy_of_its_trajectories():
    """n = m: V_k = K beta_k, so tr(V^T K^-1 V) = tr(beta^T K beta): the paper's exact energy."""
    Z, basis, beta = span_problem(n=10)
    span = span_energy(Z, beta, sigma=0.9, lam=0.7, n_components=1, basis=basis)
    T = span.trajectories
    np.testing.assert_array_equal(T[0], Z)
    full = diffeomap_energy(T, sigma=0.9, lam=0.7, n_components=1, basis=None, eps=1e-12)
    assert full.energy == pytest.approx(span.energy, rel=1e-6)
    assert full.kinetic == pytest.approx(span.kinetic, rel=1e-6)
    # with a strict subset, the trajectories' full-set energy is that of the same field again
    # only if V stays in the span: the subset energy is at least the full-set one (the field
    # sum_I beta_i k(Phi[i], .) interpolates V_k, and K^-1 gives the smallest such norm)
    Zs, bs, betas = span_problem(n=4, seed=1)
    sub = span_energy(Zs, betas, sigma=0.9, lam=0.7, n_components=1, basis=bs)
    fs = diffeomap_energy(sub.trajectories, 0.9, 0.7, 1, basis=None, eps=1e-12)
    assert sub.kinetic >= fs.kinetic * (1 - 1e-6)


def test_span_fit_starts_at_the_identity_and_lowers_the_energy():
    X, _ = parabola(m=30, seed=2)
    Z = fit_pca_rotation(X).apply(X)
    basis = np.arange(0, 30, 3)
    none = fit_span(Z, n_components=1, sigma=0.5, lam=0.0, p=3, basis=basis, max_iter=50)
    assert none.parts.energy == 0.0
    np.testing.assert_array_equal(none.trajectories, np.repeat(Z[None], 4, axis=0))
    for whiten in (True, False):
        fit = fit_span(
            Z, n_components=1, sigma=0.5, lam=5.0, p=3, basis=basis, max_iter=100, whiten=whiten
        )
        assert fit.parts.energy < 0.2 * 5.0 * np.sum(Z[:, 1:] ** 2)
        assert fit.coef.shape == (3, 10, 2)


@pytest.mark.parametrize("n_basis", [12, 40], ids=["reduced", "full"])
def test_span_flow_of_the_training_data_is_the_fitted_map(curve_fit, n_basis):
    X, _, _, _ = curve_fit
    model = Diffeomap(
        n_components=1, sigma=0.3, lam=10.0, p=5, n_basis=n_basis, max_iter=100, random_state=0
    ).fit(X)
    assert model.formulation == "span"
    displacement = np.abs(model.trajectories_[-1] - model.trajectories_[0]).max()
    assert displacement > 0.1
    np.testing.assert_allclose(model.flow(X), model.trajectories_[-1], rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.transform(X), model.embedding_, rtol=0, atol=1e-10)


# ----------------------------------------------------------------------------- fused full set


@pytest.mark.parametrize("rows", [5, 128], ids=["3-blocks", "1-block"])
def test_full_flow_energy_gradient_matches_central_differences(rows, monkeypatch):
    monkeypatch.setattr(diffeomap_kernels, "FLOW_BLOCK_ROWS", rows)
    Z, _, beta = span_problem(m=12, r=3, p=3, n=12, seed=4)

    def energy(b):
        kinetic, off, _, _ = full_flow_energy(Z, b, sigma=0.9, lam=0.7, n_components=1)
        return kinetic + 0.7 * off

    kinetic, off, grad, _ = full_flow_energy(Z, beta, sigma=0.9, lam=0.7, n_components=1)
    assert kinetic > 0 and off > 0
    numeric = central_difference(energy, beta, h=1e-6)
    assert np.abs(grad - numeric).max() / np.abs(numeric).max() < 1e-6


@pytest.mark.parametrize(
    ("m", "r", "p", "rows"),
    [(40, 3, 4, 7), (300, 24, 3, 128), (2000, 3, 2, 128)],
    ids=["blocks-of-7", "vowel-dims", "parallel"],
)
def test_fused_full_set_energy_equals_the_matrix_path(m, r, p, rows, monkeypatch):
    """span_energy with I = every point goes through the fused kernel; the stored-matrix path
    (any basis) is the reference: the same energy, gradient and trajectories to rounding."""
    monkeypatch.setattr(diffeomap_kernels, "FLOW_BLOCK_ROWS", rows)
    rng = np.random.default_rng(m)
    Z = rng.standard_normal((m, r))
    beta = 0.3 * rng.standard_normal((p, m, r))
    sigma = 0.5 * np.sqrt(r)
    every = np.arange(m)
    fused = span_energy(Z, beta, sigma, lam=3.0, n_components=2, basis=every)
    reference = span_energy(
        Z, beta, sigma, lam=3.0, n_components=2, basis=every, path="matrices"
    )
    assert fused.energy == pytest.approx(reference.energy, rel=1e-12)
    assert fused.kinetic == pytest.approx(reference.kinetic, rel=1e-12)
    assert fused.off_subspace == pytest.approx(reference.off_subspace, rel=1e-12)
    scale = np.abs(reference.grad).max()
    assert np.abs(fused.grad - reference.grad).max() < 1e-11 * scale
    np.testing.assert_allclose(fused.trajectories, reference.trajectories, rtol=0, atol=1e-12)
    # a strict subset is not the full set: it takes the matrix path, with another energy
    subset = span_energy(Z, beta[:, : m // 2], sigma, 3.0, 2, every[: m // 2])
    assert subset.energy != pytest.approx(fused.energy, rel=1e-6)


@pytest.mark.parametrize(
    ("m", "r", "p", "rows"),
    [(40, 3, 4, 7), (100, 5, 3, 128), (300, 24, 3, 128), (200, 256, 2, 64), (2000, 3, 2, 128)],
    ids=["blocks-of-7", "one-block", "vowel-dims", "usps-dims", "parallel"],
)
def test_full_flow_energy_reusing_forward_kernels_is_bitwise_the_recomputation(
    m, r, p, rows, monkeypatch
):
    """The reverse pass reading the kernel matrices the forward pass kept (every step, the
    first steps within a smaller budget) gives bitwise the energy, gradient and trajectories
    of recomputing every one (no buffer); a buffer shared by evaluations (a fit's) gives the
    same whatever an earlier evaluation left in it."""
    monkeypatch.setattr(diffeomap_kernels, "FLOW_BLOCK_ROWS", rows)
    rng = np.random.default_rng(m)
    Z = rng.standard_normal((m, r))
    beta = 0.3 * rng.standard_normal((p, m, r))
    sigma = 0.5 * np.sqrt(r)
    recomputed = full_flow_energy(Z, beta, sigma, 3.0, 2)
    step = 8 * m * m
    for store_bytes, steps in [(None, p), (step, 1), (p * step - 1, p - 1), (0, 0)]:
        buffer = diffeomap_kernels.flow_kernel_buffer(m, p, store_bytes)
        assert len(buffer) == diffeomap_kernels.stored_flow_steps(m, p, store_bytes) == steps
        for scale in (2.0, 1.0):  # the second evaluation overwrites the first's matrices
            reused = full_flow_energy(Z, scale * beta, sigma, 3.0, 2, kernels=buffer)
        for got, want in zip(reused, recomputed, strict=True):
            assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="kernels must be"):
        full_flow_energy(Z, beta, sigma, 3.0, 2, kernels=np.empty((p + 1, m, m)))


def test_full_set_fit_is_bitwise_the_same_with_and_without_kept_kernels(monkeypatch):
    """A whole full-set fit (the workflow's full_set jobs) with every step's K_k kept and with
    none: the same embedding, energies and trace, bit for bit."""
    X, _ = parabola(m=30, seed=2)
    fits = []
    for budget in (diffeomap_kernels.FLOW_STORE_BYTES, 0):
        monkeypatch.setattr(diffeomap_kernels, "FLOW_STORE_BYTES", budget)
        model = Diffeomap(n_components=1, sigma=0.4, lam=5.0, p=3, n_basis=None, max_iter=20)
        fits.append(model.fit(X))
    kept, recomputed = fits
    assert diffeomap_kernels.stored_flow_steps(30, 3) == 0  # the second fit kept none
    for name in ("embedding_", "trajectories_", "flow_coef_", "energy_trace_"):
        assert np.array_equal(getattr(kept, name), getattr(recomputed, name))
    assert kept.energy_ == recomputed.energy_ and kept.n_evaluations_ == recomputed.n_evaluations_


def test_default_kernel_budget_keeps_every_step_of_the_default_full_set_fits():
    steps = diffeomap_kernels.stored_flow_steps
    assert steps(2700, 20) == 20 and steps(3000, 5) == 5 and steps(1740, 20) == 20
    assert steps(10_000, 20) == diffeomap_kernels.FLOW_STORE_BYTES // (8 * 10_000**2) == 2
    assert steps(2700, 20, store_bytes=0) == 0 and steps(2700, 20, store_bytes=-1) == 0


def test_span_full_set_keeps_repeated_points_as_basis_functions():
    """n_basis=None under "span": every point a basis function, repeats too (the fused
    full-set kernel's case); a repeated point moves with its twin."""
    X, _ = parabola(m=20, seed=5)
    X = np.vstack([X, X[:3]])
    model = Diffeomap(n_components=1, sigma=0.4, lam=5.0, p=3, n_basis=None, max_iter=30)
    model.fit(X)
    np.testing.assert_array_equal(model.basis_, np.arange(23))
    np.testing.assert_array_equal(model.embedding_[20:], model.embedding_[:3])
    assert np.abs(model.embedding_ - model.trajectories_[0][:, :1]).max() > 1e-3
    charged = Diffeomap(n_components=1, sigma=0.4, lam=5.0, p=3, n_basis=None, max_iter=2,
                        formulation="charged").fit(X)  # fmt: skip
    assert len(charged.basis_) == 20  # the distinct points (a repeat makes K_nm K_mn singular)
