"""Elastic Embedding glue: sweep with learning-rate fallback, table, figures, homotopy."""

import argparse

import numpy as np
import pandas as pd
import pytest

from embedlab import artifacts
from embedlab.datasets.synthetic import build_swiss_roll
from embedlab.experiments import ee
from embedlab.methods.elastic import elastic_costs


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
    assert ee.unrolling(line, t)[0] > 0.999
    folded = np.column_stack([np.abs(t - 5.0), rng.normal(0, 0.01, 200)])  # not unrolled
    assert ee.unrolling(folded, t)[0] < 0.3
    blob = rng.normal(size=(200, 2))
    assert ee.unrolling(blob, t)[0] < 0.3


def test_sweep_falls_back_to_the_next_learning_rate(roll):
    art, _ = roll
    X = art.arrays["X"]
    table, maps = ee.sweep(
        X, art.arrays["labels"], "roll", {"distance": [1000.0], "uniform": [1e-3]}, 12.0,
        [1e6, 100.0], 150,
    )
    assert list(table["negative_weights"]) == ["distance", "uniform"]
    assert (table["learning_rate"] == 100.0).all()
    assert table["diverged_at"].str.startswith("1e+06").all()
    assert maps.shape == (2, 300, 2) and np.isfinite(maps).all()
    assert table["nn1_error"].between(0, 1).all() and table["trustworthiness"].between(0, 1).all()
    # every learning rate diverging is recorded, not raised
    table, maps = ee.sweep(X, None, "roll", {"distance": [1000.0]}, 12.0, [1e6], 150)
    assert table["learning_rate"].isna().all() and np.isnan(maps).all()


def test_cli_sweep_table_figure_homotopy(roll, tmp_path):
    _, folder = roll
    parser = argparse.ArgumentParser()
    ee.register(parser.add_subparsers())

    def run(*argv):
        args = parser.parse_args([str(a) for a in argv])
        args.func(args)

    maps, csv = tmp_path / "roll.npz", tmp_path / "roll.csv"
    run("ee-sweep", "--artifact", folder, "--dataset", "roll", "--perplexity", 12,
        "--lambdas", '{"distance": [10, 100], "uniform": [1e-4]}', "--max-iter", 100,
        "--learning-rates", 100, 10, "--out", maps, "--csv", csv)
    run("ee-table", "--csv", tmp_path / "t.csv", "--md", tmp_path / "t.md", csv, "--left-out", "{}")
    table = pd.read_csv(tmp_path / "t.csv")
    assert len(table) == 3 and "trustworthiness" in (tmp_path / "t.md").read_text()
    run("ee-figure", "--artifact", folder, "--dataset", "roll", "--runs", maps, "--csv", csv,
        "--out", tmp_path / "fig")
    assert (tmp_path / "fig.png").stat().st_size > 0 and (tmp_path / "fig.pdf").exists()
    run("ee-homotopy", "--artifact", folder, "--budget", 140, "--logspace-steps", 7,
        "--lam", 100, "--perplexity", 12, "--learning-rate", 100, "--start", 1e-4,
        "--csv", tmp_path / "h.csv", "--md", tmp_path / "h.md", "--out", tmp_path / "h")
    homotopy = pd.read_csv(tmp_path / "h.csv")
    assert list(homotopy["schedule"]) == ["fixed", "polytope", "logspace"]
    assert (homotopy["n_iter"] <= 140).all() and (homotopy["budget"] == 140).all()
    assert list(homotopy["stages"]) == [1, 7, 7]
    assert homotopy["spearman_t"].between(0, 1).all()
    assert (tmp_path / "h.png").exists()


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
