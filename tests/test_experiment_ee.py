"""Elastic Embedding glue: sweep with learning-rate fallback, table, figures, homotopy."""

import numpy as np
import pandas as pd
import pytest

from embedlab import artifacts
from embedlab.datasets.synthetic import build_swiss_roll
from embedlab.experiments.ee import homotopy
from embedlab.experiments.ee import sweep as ee
from embedlab.experiments.ee.settings import SweepSettings
from embedlab.methods.elastic import elastic_costs
from embedlab.steps import call


@pytest.fixture(scope="module")
def roll(tmp_path_factory):
    art = build_swiss_roll({}, n_points=300, seed=1)
    folder = tmp_path_factory.mktemp("data") / "roll"
    artifacts.save(art, folder, "roll")
    return art, folder


def test_unrolling_measure():
    t = np.linspace(0, 10, 200)
    rng = np.random.default_rng(0)
    line = np.column_stack([np.cos(0.6) * t, np.sin(0.6) * t]) + rng.normal(0, 0.01, (200, 2))
    assert homotopy.unrolling(line, t)[0] > 0.999
    folded = np.column_stack([np.abs(t - 5.0), rng.normal(0, 0.01, 200)])  # not unrolled
    assert homotopy.unrolling(folded, t)[0] < 0.3
    blob = rng.normal(size=(200, 2))
    assert homotopy.unrolling(blob, t)[0] < 0.3


def test_sweep_falls_back_to_the_next_learning_rate(roll):
    art, _ = roll
    X = art.arrays["X"]
    settings = SweepSettings(
        lambdas={"distance": [1000.0], "uniform": [1e-3]},
        perplexity=12.0,
        learning_rates=(1e6, 100.0),
        max_iter=150,
    )
    table, maps = ee.sweep(X, art.arrays["labels"], "roll", settings)
    assert list(table["negative_weights"]) == ["distance", "uniform"]
    assert (table["learning_rate"] == 100.0).all()
    assert table["diverged_at"].str.startswith("1e+06").all()
    assert maps.shape == (2, 300, 2) and np.isfinite(maps).all()
    assert table["nn1_error"].between(0, 1).all() and table["trustworthiness"].between(0, 1).all()
    # every learning rate diverging is recorded, not raised
    settings = SweepSettings(
        lambdas={"distance": [1000.0]}, perplexity=12.0, learning_rates=(1e6,), max_iter=150
    )
    table, maps = ee.sweep(X, None, "roll", settings)
    assert table["learning_rate"].isna().all() and np.isnan(maps).all()


def test_steps_sweep_table_figure_homotopy(roll, tmp_path):
    _, folder = roll
    data = [str(folder / name) for name in artifacts.FILES]
    maps, csv = str(tmp_path / "roll.npz"), str(tmp_path / "roll.csv")
    sweep = {
        "perplexity": 12,
        "lambdas": {"distance": [10, 100], "uniform": [1e-4]},
        "max_iter": 100,
        "learning_rates": [100, 10],
    }
    call("ee.sweep", sweep, dict(data=data, maps=maps, csv=csv, dataset="roll"))
    t_csv, t_md = tmp_path / "t.csv", tmp_path / "t.md"
    call("ee.table", {"left_out": {}}, dict(sweeps=[csv], csv=str(t_csv), md=str(t_md)))
    table = pd.read_csv(t_csv)
    assert len(table) == 3 and "trustworthiness" in t_md.read_text()
    figure = dict(png=str(tmp_path / "fig.png"), pdf=str(tmp_path / "fig.pdf"))
    call("ee.figure", {}, dict(data=data, maps=maps, csv=csv, dataset="roll", **figure))
    assert (tmp_path / "fig.png").stat().st_size > 0 and (tmp_path / "fig.pdf").exists()
    schedules = {
        "budget": 140,
        "logspace_steps": 7,
        "lam": 100,
        "perplexity": 12,
        "learning_rate": 100,
        "start": 1e-4,
    }
    h_csv, h_maps = str(tmp_path / "h.csv"), str(tmp_path / "h.npz")
    call("ee.homotopy", schedules, dict(data=data, csv=h_csv, md=str(tmp_path / "h.md"),
                                        maps=h_maps))  # fmt: skip
    rows = pd.read_csv(h_csv)
    assert list(rows["schedule"]) == ["fixed", "polytope", "logspace"]
    assert (rows["n_iter"] <= 140).all() and (rows["budget"] == 140).all()
    assert list(rows["stages"]) == [1, 7, 7]
    assert rows["spearman_t"].between(0, 1).all()
    # the figure is a job of its own, drawn from the saved maps
    figure = dict(png=str(tmp_path / "h.png"), pdf=str(tmp_path / "h.pdf"))
    call("ee.homotopy_figure", {}, dict(data=data, csv=h_csv, maps=h_maps, **figure))
    assert (tmp_path / "h.png").stat().st_size > 0 and (tmp_path / "h.pdf").exists()


def test_oscillating_run_falls_back_to_a_smaller_learning_rate():
    """Iris at lambda = 1000 (distance weights): lr 100 never settles without diverging (the
    notes use lr 10 there); the fallback must detect it and use 10."""
    from sklearn.datasets import load_iris

    X = load_iris().data
    objective = elastic_costs(X, 40.0)["distance"]
    params = dict(lam=1000.0, perplexity=40.0, negative_weights="distance", max_iter=1000)
    est, lr, failures = ee.fit_with_fallback(X, objective, [100.0, 10.0], **params)
    assert lr == 10.0 and not ee.oscillating(est)
    assert len(failures) == 1 and failures[0].startswith("100: oscillating")
    # with no smaller rate left, the oscillating fit is kept and reported
    est, lr, failures = ee.fit_with_fallback(X, objective, [100.0], **params)
    assert lr == 100.0 and ee.oscillating(est) and "oscillating" in failures[0]


def test_fit_leaves_a_shared_objective_unchanged():
    from sklearn.datasets import load_iris

    from embedlab.methods.elastic import ElasticEmbedding

    X = load_iris().data
    objective = elastic_costs(X, 40.0, lam=7.0)["distance"]
    est = ElasticEmbedding(lam=10.0, homotopy="polytope", homotopy_start=1.0, max_iter=30)
    est.fit(X, objective=objective)
    assert objective.lam == 7.0
    np.testing.assert_allclose(est.lambdas_, [1.0, 10.0])
    assert est.cost_ == pytest.approx(objective.with_lam(10.0).cost(est.embedding_))
