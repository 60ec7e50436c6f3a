"""Repeated runs: every grid point x restart is fitted, kept, and the best chosen."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from embedlab import runs


class Quadratic(BaseEstimator):
    """Toy estimator: cost = (lr - 1)^2 + seed / 100; fails when lr is too large."""

    def __init__(self, lr=1.0, random_state=None):
        self.lr = lr
        self.random_state = random_state

    def fit(self, data):
        if self.lr > 5:
            raise FloatingPointError(f"diverged at lr={self.lr}")
        rng = np.random.default_rng(self.random_state)
        self.embedding_ = rng.normal(size=(len(data), 2))
        self.kl_divergence_ = (self.lr - 1) ** 2 + self.random_state / 100
        self.cost_trace_ = np.linspace(2, self.kl_divergence_, 4)
        self.n_iter_ = 4
        return self


def test_grid_restarts_best_and_round_trip(tmp_path):
    data = np.zeros(5)
    got = runs.run_grid(
        Quadratic, data, {"lr": [0.5, 1.0, 9.0]}, n_restarts=3, seed=10, catch=(FloatingPointError,)
    )
    assert len(got) == 9
    assert [r.seed for r in got[:3]] == [10, 11, 12]
    failed = [r for r in got if r.error]
    assert len(failed) == 3 and all(np.isinf(r.cost) for r in failed)
    best = runs.best_run(got)
    assert best.params == {"lr": 1.0} and best.seed == 10
    path = runs.save_runs(tmp_path / "r.npz", got, {"method": "toy"})
    back = runs.load_runs(path)
    assert back["best"]["cost"] == pytest.approx(best.cost)
    np.testing.assert_array_equal(back["best_embedding"], best.embedding)
    np.testing.assert_array_equal(back["trace"](4), got[4].cost_trace)
    assert back["meta"]["method"] == "toy" and len(back["runs"]) == 9
    assert back["runs"][-1]["error"].startswith("FloatingPointError")


def test_uncaught_errors_propagate_and_all_failed_is_an_error():
    with pytest.raises(FloatingPointError):
        runs.run_grid(Quadratic, np.zeros(3), {"lr": [9.0]}, n_restarts=1)
    failed = runs.run_grid(Quadratic, np.zeros(3), {"lr": [9.0]}, 2, catch=(FloatingPointError,))
    with pytest.raises(
        RuntimeError,
        match=r"all 2 runs failed; the first \(\{'lr': 9.0\}, seed 0\): FloatingPointError",
    ):
        runs.best_run(failed)


def test_save_npz_round_trips_atomically_with_plain_permissions(tmp_path):
    import os
    import stat

    path = tmp_path / "sub" / "maps.npz"
    runs.save_npz(path, {"Y": np.arange(6.0).reshape(3, 2)}, {"meta": {"k": np.int64(3)}})
    arrays, info = runs.load_npz(path)
    np.testing.assert_array_equal(arrays["Y"], np.arange(6.0).reshape(3, 2))
    assert info["meta"] == {"k": 3} and "embedlab_version" in info
    assert [p.name for p in path.parent.iterdir()] == ["maps.npz"]  # no temporary left
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    with pytest.raises(TypeError):
        runs.save_npz(path, {"Y": np.zeros(2)}, {"meta": {"bad": object()}})
    np.testing.assert_array_equal(runs.load_npz(path)[0]["Y"], arrays["Y"])  # old file intact


def test_save_npz_keeps_a_sparse_matrix_sparse(tmp_path):
    P = sp.random(7, 7, density=0.3, format="csr", random_state=0)
    path = runs.save_npz(tmp_path / "p.npz", {"P": P, "Y": np.ones(3)}, {})
    arrays, _ = runs.load_npz(path)
    assert sp.issparse(arrays["P"]) and arrays["P"].shape == (7, 7)
    assert (arrays["P"] != P).nnz == 0
    np.testing.assert_array_equal(arrays["Y"], np.ones(3))
