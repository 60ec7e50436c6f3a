"""The GP-LVM baselines of the Diffeomap table through GPy (experiments/diffeomap/gplvm.py):
the steps on a tiny labelled set (finite 2-D maps, a baselines-like file), the gradient of
the sparse back-constrained model against finite differences, the 1-NN table and summary
gaining measured GP-LVM rows, and Fig. 2 drawing the GP-LVM maps beside Diffeomap's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embedlab import artifacts, summary
from embedlab.experiments.diffeomap import gplvm
from embedlab.experiments.diffeomap.fits import load
from embedlab.experiments.diffeomap.scoring import class_errors
from embedlab.experiments.diffeomap.settings import BcGplvmSettings
from embedlab.steps import call

from .helpers import save_labelled_vectors

#: the data as they are: no subset, PCA or author classes
AS_IS = {"subsample": None, "pca_dims": None, "top_authors": None, "author_match": "exactly_one",
         "use_labels": True, "centre_frames": False}  # fmt: skip
#: short fits of the exact GP
SHORT = {"inducing": 0, "max_iter": 30, "optimizer": "scg", "data_scale": 1.0, "seed": 0,
         "preparation": AS_IS}  # fmt: skip
MLP = {"back_constraint": "mlp", "mlp_hidden": 5, "rbf_inverse_width": 0.1, "back_init_iters": 50}


@pytest.fixture
def rings(tmp_path):
    """Three noisy rings in 6-D, 15 points each: 45 points, labels 0-2."""
    rng = np.random.default_rng(1)
    angle = rng.uniform(0, 2 * np.pi, size=45)
    labels = np.repeat(np.arange(3), 15)
    X = np.zeros((45, 6))
    X[:, 0], X[:, 1] = np.cos(angle), np.sin(angle)
    X[:, 2] = 3.0 * labels
    X += 0.05 * rng.normal(size=X.shape)
    return save_labelled_vectors(tmp_path / "rings", X, labels)


def files(folder):
    return [str(folder / name) for name in ("data.npz", "items.tsv", "meta.json")]


def run_step(step, settings, folder, out):
    call(step, settings, {"data": files(folder), "npz": str(out), "dataset": folder.name})
    return load(out)


@pytest.mark.parametrize(
    ("step", "extra"),
    [
        ("diffeomap.gplvm", {}),
        ("diffeomap.gplvm", {"inducing": 10}),
        ("diffeomap.bc_gplvm", MLP),
        ("diffeomap.bc_gplvm", {**MLP, "back_constraint": "rbf", "inducing": 10}),
    ],
)
def test_a_gplvm_step_writes_a_finite_2d_map_with_its_errors(rings, tmp_path, step, extra):
    method = step.split(".")[1]
    data = run_step(step, {**SHORT, **extra}, rings, tmp_path / f"{method}.npz")
    Z = data["arrays"][f"map_{method}"]
    assert Z.shape == (45, 2) and np.isfinite(Z).all()
    assert data["arrays"]["rows"].tolist() == list(range(45))
    (run,) = data["runs"]
    assert run["method"] == method and run["n_labelled"] == 45
    labels = artifacts.load(rings).arrays["labels"]
    assert run["errors"] == class_errors(Z, labels)[0]
    assert run["params"]["inducing"] == extra.get("inducing", 0)
    assert ("back_constraint" in run["params"]) == (method == "bc_gplvm")
    assert run["fit"]["evaluations"] > 1 and np.isfinite(run["fit"]["log_likelihood"])
    assert data["meta"]["dataset"] == "rings"


def test_the_fit_moves_the_map_from_its_pca_start_and_raises_the_likelihood(rings):
    X = np.asarray(artifacts.load(rings).arrays["X"], dtype=np.float64)
    settings = BcGplvmSettings.from_mapping({**SHORT, **MLP}, "test")
    Y = X - X.mean(axis=0)
    model, facts = gplvm.build_model(Y, settings)
    start = gplvm.latent(model)
    before = -model.objective_function()
    model.optimize("scg", max_iters=30)
    assert -model.objective_function() > before
    assert not np.allclose(gplvm.latent(model), start)
    assert facts["start_rms_from_pca"] < 0.5  # the MLP fitted to the unit-variance PCA start


def test_a_kernel_back_constraint_starts_at_the_pca_map(rings):
    X = np.asarray(artifacts.load(rings).arrays["X"], dtype=np.float64)
    Y = X - X.mean(axis=0)
    X0 = np.linalg.svd(Y, full_matrices=False)[0][:, :2]
    settings = BcGplvmSettings.from_mapping({**SHORT, **MLP, "back_constraint": "rbf"}, "t")
    mapping = gplvm.back_mapping(Y, settings)
    assert gplvm.fit_mapping(mapping, Y, X0, 1) < 1e-6  # K (45 x 45, full rank) solved exactly


def test_the_sparse_back_constrained_models_gradient_matches_finite_differences(rings):
    X = np.asarray(artifacts.load(rings).arrays["X"], dtype=np.float64)
    Y = X - X.mean(axis=0)
    for back in ("mlp", "rbf"):
        settings = BcGplvmSettings.from_mapping(
            {**SHORT, **MLP, "back_constraint": back, "inducing": 8}, "test"
        )
        model, _ = gplvm.build_model(Y, settings)
        assert isinstance(model, gplvm.SparseBCGPLVM)
        assert model.checkgrad(tolerance=1e-4), back


def test_an_unknown_back_constraint_fails_naming_it(rings):
    settings = BcGplvmSettings.from_mapping({**SHORT, **MLP, "back_constraint": "linear"}, "t")
    with pytest.raises(ValueError, match="back_constraint='linear'"):
        gplvm.back_mapping(np.zeros((3, 2)), settings)


def test_the_table_and_summary_gain_measured_gplvm_rows(rings, tmp_path):
    g = tmp_path / "gplvm.npz"
    run_step("diffeomap.gplvm", SHORT, rings, g)
    b = tmp_path / "baselines.npz"
    call(
        "diffeomap.baselines",
        {"seed": 0, "baselines": ["pca"], "isomap_neighbors": 7, "preparation": AS_IS},
        {"data": files(rings), "npz": str(b), "dataset": "rings"},
    )
    paper = tmp_path / "paper.csv"
    pd.DataFrame({"dataset": ["rings"] * 3, "method": ["pca", "gplvm", "bc_gplvm"],
                  "metric": ["loo_1nn_errors"] * 3, "value": [20, 1000, 5],
                  "note": [""] * 3}).to_csv(paper, index=False)  # fmt: skip
    csv, md = tmp_path / "t.csv", tmp_path / "t.md"
    call(
        "diffeomap.table",
        {"left_out": {}},
        {"results": [str(b)], "gplvm_maps": [str(g)], "paper": str(paper), "csv": csv,
         "md": md},
    )  # fmt: skip
    df = pd.read_csv(csv)
    row = df[df["method"] == "gplvm"].iloc[0]
    assert row["stage"] == "baseline" and row["paper"] == 1000
    assert row["value"] == load(g)["runs"][0]["errors"]
    assert row["verdict"] == "better"  # at most 45 errors against 1000
    assert '"inducing": 0' in row["params"]
    # bc_gplvm was not run: its paper value stays a quoted row
    quoted = df[df["method"] == "bc_gplvm"].iloc[0]
    assert quoted["stage"].startswith("quoted") and pd.isna(quoted["value"])
    rows = {r["item"]: r for r in summary.diffeomap_rows(paper, csv)}
    assert rows["rings gplvm loo_1nn_errors"]["ours"] == row["value"]
    assert rows["rings gplvm loo_1nn_errors"]["verdict"] == "better"
    assert rows["rings bc_gplvm loo_1nn_errors"]["verdict"] == summary.NOT_IN_RUN


def test_fig2_draws_each_gplvm_map_beside_diffeomaps(rings, tmp_path):
    from embedlab.experiments.diffeomap.figures import paper_figure

    maps = []
    for step, extra in (("diffeomap.gplvm", {}), ("diffeomap.bc_gplvm", MLP)):
        out = tmp_path / f"{step}.npz"
        run_step(step, {**SHORT, **extra}, rings, out)
        maps.append(str(out))
    fit = tmp_path / "fit.npz"
    call(
        "diffeomap.fit",
        {"seed": 0, "eps": 1.0, "optimizer": "lbfgs", "formulation": "span", "p": 2,
         "n_basis": None, "max_iter": 3, "grid": {"sigma_rel": [0.5], "lam": [1.0]},
         "preparation": AS_IS},
        {"data": files(rings), "npz": str(fit), "dataset": "rings", "stage": "full_set"},
    )  # fmt: skip
    drawn = paper_figure("fig2", fit, rings, "", maps)
    titles = [ax.get_title() for ax in drawn.axes]
    assert titles[0].startswith("Diffeomap")
    assert titles[1].startswith("GP-LVM (GPy)\nexact GP")
    assert titles[2].startswith("back-constrained GP-LVM (GPy)\nexact GP, mlp back constraint")
