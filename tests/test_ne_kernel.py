"""The exact neighbour-embedding kernel: cost and gradient against a plain numpy reference,
central finite differences, scikit-learn's exact t-SNE, and its numerical safeguards."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

from embedlab.kernels import neighbour as K
from embedlab.kernels import output_kernels as W
from embedlab.methods.neighbour_affinities import validate_affinities
from embedlab.methods.neighbour_kl import NeighbourKL
from embedlab.optimize import DivergenceError
from tests.helpers import random_embedding, random_P

# (output kernel, n_space, n_time)
CASES = [("sne", 2, 0), ("sne", 3, 0), ("tsne", 2, 0), ("tsne", 4, 0), ("snest", 2, 1),
         ("snest", 1, 1), ("snest", 3, 2)]


def reference(kernel: str, Y: np.ndarray, P, n_space: int, exaggeration: float = 1.0):
    """Plain numpy: KL(P||Q), log Z and the gradient of x * KL + (1 - x) log Z, written from
    q_ij = w_ij / Z directly (no attraction/repulsion split, no shift but log-sum-exp)."""
    P = P.toarray() if sp.issparse(P) else np.asarray(P)
    S, T = Y[:, :n_space], Y[:, n_space:]
    a = ((S[:, None, :] - S[None, :, :]) ** 2).sum(-1)
    b = ((T[:, None, :] - T[None, :, :]) ** 2).sum(-1)
    log_w = {"sne": -a, "tsne": -np.log1p(a), "snest": b - np.log1p(a)}[kernel]
    alpha = np.ones_like(a) if kernel == "sne" else 1.0 / (1.0 + a)
    beta = -np.ones_like(b) if kernel == "snest" else np.zeros_like(b)
    off = ~np.eye(len(Y), dtype=bool)
    log_z = logsumexp(log_w[off])
    log_q = log_w - log_z
    nz = P > 0
    kl = float(np.sum(P[nz] * (np.log(P[nz]) - log_q[nz])))
    C = 4.0 * (exaggeration * P - np.where(off, np.exp(log_q), 0.0))
    Ca, Cb = C * alpha, C * beta
    grad = np.hstack([Ca.sum(1)[:, None] * S - Ca @ S, Cb.sum(1)[:, None] * T - Cb @ T])
    return kl, float(log_z), grad


@pytest.fixture(scope="module")
def P_small():
    return random_P(24, seed=3)


@pytest.mark.parametrize("kernel,n_space,n_time", CASES)
@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("scale", [0.3, 5.0])
def test_kernel_matches_numpy_reference(P_small, kernel, n_space, n_time, dense, scale):
    Y = random_embedding(24, n_space, n_time, seed=n_space + 7 * n_time, scale=scale)
    P = P_small.toarray() if dense else P_small
    objective = NeighbourKL(validate_affinities(P), kernel, n_space)
    kl, grad = objective(Y)
    kl_ref, _, grad_ref = reference(kernel, Y, P_small, n_space)
    assert kl == pytest.approx(kl_ref, rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-10, atol=1e-10 * np.abs(grad_ref).max())


@pytest.mark.parametrize("kernel,n_space,n_time", CASES)
@pytest.mark.parametrize("dense", [False, True])
def test_gradient_matches_central_differences(P_small, kernel, n_space, n_time, dense):
    n = 18
    P = random_P(n, seed=11)
    objective = NeighbourKL(validate_affinities(P.toarray() if dense else P), kernel, n_space)
    Y = random_embedding(n, n_space, n_time, seed=5)
    _, grad = objective(Y)
    h = 1e-6
    numeric = np.empty_like(Y)
    for idx in np.ndindex(*Y.shape):
        Yp, Ym = Y.copy(), Y.copy()
        Yp[idx] += h
        Ym[idx] -= h
        numeric[idx] = (objective.cost(Yp) - objective.cost(Ym)) / (2 * h)
    blocks = {"space": slice(0, n_space), "time": slice(n_space, n_space + n_time)}
    for block, cols in blocks.items():
        if cols.stop > cols.start:
            g, fd = grad[:, cols], numeric[:, cols]
            err = np.linalg.norm(g - fd) / np.linalg.norm(fd)
            assert err < 1e-6, f"{kernel} {block} block: relative error {err:.2e}"


@pytest.mark.parametrize("kernel,n_space,n_time", [("tsne", 2, 0), ("snest", 2, 1)])
def test_exaggerated_gradient_is_that_of_the_exaggerated_objective(kernel, n_space, n_time):
    """grad(x) = d/dY [x KL + (1 - x) log Z]: only the attraction is scaled."""
    n, x = 16, 4.0
    P = random_P(n, seed=2)
    Y = random_embedding(n, n_space, n_time, seed=4)
    _, grad = NeighbourKL(P, kernel, n_space)(Y, exaggeration=x)

    def exaggerated(Z):
        kl, log_z, _ = reference(kernel, Z, P, n_space)
        return x * kl + (1 - x) * log_z

    h = 1e-6
    numeric = np.empty_like(Y)
    for idx in np.ndindex(*Y.shape):
        Yp, Ym = Y.copy(), Y.copy()
        Yp[idx] += h
        Ym[idx] -= h
        numeric[idx] = (exaggerated(Yp) - exaggerated(Ym)) / (2 * h)
    assert np.linalg.norm(grad - numeric) / np.linalg.norm(numeric) < 1e-6
    np.testing.assert_allclose(grad, reference(kernel, Y, P, n_space, x)[2], rtol=1e-10, atol=1e-12)


def test_tsne_matches_scikit_learn_exact_gradient(P_small):
    from scipy.spatial.distance import squareform
    from sklearn.manifold._t_sne import _kl_divergence

    Y = random_embedding(24, 2, 0, seed=9, scale=2.0)
    kl_sk, grad_sk = _kl_divergence(
        Y.ravel(), squareform(P_small.toarray(), checks=False), 1.0, 24, 2
    )
    kl, grad = NeighbourKL(P_small, "tsne", 2)(Y)
    assert kl == pytest.approx(kl_sk, rel=1e-10)
    np.testing.assert_allclose(grad.ravel(), grad_sk, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kernel,n_space,n_time", CASES)
def test_parallel_and_serial_entry_points_agree(P_small, kernel, n_space, n_time):
    Y = random_embedding(24, n_space, n_time, seed=1)
    kid = W.KERNEL_IDS[kernel]
    parts = K.csr_parts(P_small)
    par = K.pair_fields(kid, Y, n_space, parts, parallel=True)
    ser = K.pair_fields(kid, Y, n_space, parts, parallel=False)
    assert par.mass == pytest.approx(ser.mass, rel=1e-13)
    assert par.att_cost == pytest.approx(ser.att_cost, rel=1e-13)
    np.testing.assert_allclose(par.rep, ser.rep, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(par.att, ser.att, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_result_does_not_depend_on_the_thread_count(precision):
    import numba

    n = 600
    P = random_P(n, seed=10, density=0.01)
    Y = random_embedding(n, 2, 1, seed=10, scale=3.0)
    parts = K.csr_parts(P)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = K.pair_fields(W.SNEST, Y, 2, parts, parallel=True, precision=precision)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)  # all (2 here)
        many = K.pair_fields(W.SNEST, Y, 2, parts, parallel=True, precision=precision)
    finally:
        numba.set_num_threads(threads)
    assert one.precision == many.precision == precision
    assert one.mass == many.mass and one.att_cost == many.att_cost
    np.testing.assert_array_equal(one.rep, many.rep)
    np.testing.assert_array_equal(one.att, many.att)


_FIELDS_SCRIPT = """
import sys
import numpy as np
import scipy.sparse as sp
from embedlab.kernels import neighbour as K
from embedlab.kernels import output_kernels as W

rng = np.random.default_rng(0)
n = 700
Y = 5.0 * rng.normal(size=(n, 2))
P = sp.random(n, n, density=0.01, random_state=1)
P = P + P.T
out = {}
for precision in ("float64", "float32"):
    f = K.pair_fields(W.TSNE, Y, 2, K.csr_parts(P / P.sum()), parallel=True, precision=precision)
    assert f.precision == precision
    out.update({f"{k}_{precision}": getattr(f, k) for k in ("mass", "att_cost", "att", "rep")})
np.savez(sys.argv[1], **out)
"""


@pytest.mark.slow
def test_fresh_and_cached_compiles_give_the_same_bits(tmp_path):
    """The first process compiles the kernel and writes numba's cache, the second loads it.
    With fastmath reassociation LLVM vectorised the sums differently in the two (t-SNE's
    repulsion differed in the last bits, and an optimisation run in the 4th digit)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    results = []
    for name in ("fresh", "cached"):
        out = tmp_path / f"{name}.npz"
        subprocess.run([sys.executable, "-c", _FIELDS_SCRIPT, str(out)], env=env, check=True)
        results.append(np.load(out))
    assert any((tmp_path / "numba-cache").rglob("*.nbi")), "the first process wrote no cache"
    fresh, cached = results
    for key in fresh.files:
        np.testing.assert_array_equal(fresh[key], cached[key], err_msg=key)


def test_blocks_cover_all_columns():
    """n larger than one column block (and not a multiple of it) against the reference."""
    n = K.BLOCK + 37
    P = random_P(n, seed=8, density=0.02)
    Y = random_embedding(n, 2, 1, seed=8, scale=3.0)
    kl, grad = NeighbourKL(P, "snest", 2)(Y)
    kl_ref, _, grad_ref = reference("snest", Y, P, 2)
    assert kl == pytest.approx(kl_ref, rel=1e-10)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-9, atol=1e-10 * np.abs(grad_ref).max())


def test_snest_large_time_values_stay_finite(P_small):
    """exp(b) overflows double for b > 709; the log-sum-exp shift keeps the cost exact."""
    Y = random_embedding(24, 2, 1, seed=6)
    Y[:, 2] *= 200.0  # time extent ~ 1000: b up to ~1e6
    objective = NeighbourKL(P_small, "snest", 2)
    kl, grad = objective(Y)
    assert np.isfinite(kl) and np.isfinite(grad).all()
    kl_ref, _, grad_ref = reference("snest", Y, P_small, 2)
    assert kl == pytest.approx(kl_ref, rel=1e-10)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-8, atol=1e-10 * np.abs(grad_ref).max())
    shifted = Y.copy()
    shifted[:, 2] += 1e3  # translation in time changes nothing
    assert objective.cost(shifted) == pytest.approx(kl, rel=1e-10)


def test_shift_fallback_when_the_bound_overshoots(P_small):
    """Several time dimensions: the O(n) bound can overshoot by > 700; recomputed exactly."""
    Y = random_embedding(24, 3, 2, seed=12)
    Y[:, 3:] *= 40.0
    kid, parts = W.SNEST, K.csr_parts(P_small)
    bound = W.log_weight_bound(kid, Y, 3)
    fields = K.pair_fields(kid, Y, 3, parts)
    assert fields.shift < bound - 700  # the fallback ran
    kl, _ = NeighbourKL(P_small, "snest", 3)(Y)
    assert kl == pytest.approx(reference("snest", Y, P_small, 3)[0], rel=1e-10)


def test_sne_far_apart_points_use_the_exact_shift(P_small):
    Y = random_embedding(24, 2, 0, seed=13, scale=300.0)  # all exp(-a) underflow
    kl, grad = NeighbourKL(P_small, "sne", 2)(Y)
    kl_ref, _, grad_ref = reference("sne", Y, P_small, 2)
    assert kl == pytest.approx(kl_ref, rel=1e-10)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-9, atol=1e-10 * np.abs(grad_ref).max())


@pytest.mark.parametrize("value", [1e200, np.inf, np.nan])
def test_blown_up_time_raises_divergence_not_nan(P_small, value):
    Y = random_embedding(24, 2, 1, seed=6)
    Y[3, 2] = value
    with pytest.raises(DivergenceError, match="blown up"):
        NeighbourKL(P_small, "snest", 2)(Y)


def test_repulsive_weights(P_small):
    """Dense repulsive weights V (Elastic Embedding's v-): ones = uniform; random V matches
    M = sum v w, R_i = sum_j v_ij w_ij alpha_ij (y_i - y_j)."""
    n = 24
    Y = random_embedding(n, 2, 0, seed=14)
    parts = K.csr_parts(P_small)
    plain = K.pair_fields(W.SNE, Y, 2, parts)
    ones = K.pair_fields(W.SNE, Y, 2, parts, rep_weights=np.ones((n, n)))
    assert ones.mass == pytest.approx(plain.mass, rel=1e-14)
    np.testing.assert_allclose(ones.rep, plain.rep, rtol=1e-13)
    rng = np.random.default_rng(0)
    V = rng.uniform(size=(n, n))
    V = V + V.T
    weighted = K.pair_fields(W.SNE, Y, 2, parts, rep_weights=V)
    a = ((Y[:, None] - Y[None]) ** 2).sum(-1)
    vw = np.where(np.eye(n, dtype=bool), 0.0, V * np.exp(-a))
    assert weighted.shift == 0.0
    assert weighted.mass == pytest.approx(vw.sum(), rel=1e-13)
    np.testing.assert_allclose(weighted.rep, vw.sum(1)[:, None] * Y - vw @ Y, rtol=1e-12)
    np.testing.assert_allclose(weighted.att, plain.att, rtol=1e-14)


def test_wrong_shapes_are_rejected(P_small):
    parts = K.csr_parts(P_small)
    with pytest.raises(ValueError, match="23 points"):
        K.pair_fields(W.TSNE, np.zeros((23, 2)), 2, parts)
    with pytest.raises(ValueError, match="n_space=3"):
        K.pair_fields(W.TSNE, np.zeros((24, 2)), 3, parts)
    with pytest.raises(ValueError, match="rep_weights"):
        K.pair_fields(W.SNE, np.zeros((24, 2)), 2, parts, rep_weights=np.ones((3, 3)))
