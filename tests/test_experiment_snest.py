"""SNEST Table 1 glue: cells, runs files, the KL table beside the paper, figures."""

import numpy as np
import pandas as pd
import pytest

from embedlab import artifacts, runs
from embedlab.datasets.school import build as build_school
from embedlab.experiments import snest

from .conftest import REPO

FULL_BUDGET = {"rate_window": 0, "plateau_tol": 0.0, "abandon_margin": float("inf")}


def test_cells_parse_and_label():
    assert snest.parse_cell("snest-2-1") == ("snest", 2, 1)
    assert snest.parse_cell("tsne-3") == ("tsne", 3, 0)
    assert snest.cell_label("snest-3-1") == "SNEST R^{3,1}"
    assert snest.budget("snest-2-1") == snest.budget("tsne-3") == 3
    for bad in ("tsne-2-1", "snest-2", "pca-2"):
        with pytest.raises(ValueError, match="cell"):
            snest.parse_cell(bad)


def test_time_ratio_sets_the_time_learning_rate():
    est = snest.make_estimator("snest-2-1", learning_rate=10.0, time_ratio=0.01)
    assert est.learning_rate_time == pytest.approx(0.1)
    assert not hasattr(
        snest.make_estimator("tsne-2", learning_rate=10.0, time_ratio=0.01), "learning_rate_time"
    )


@pytest.fixture(scope="module")
def school_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("snest")
    artifacts.save(build_school({}), tmp / "school", "school")
    files = []
    for cell, grid in [
        ("tsne-2", {"learning_rate": [10.0]}),
        ("tsne-3", {"learning_rate": [10.0]}),
        ("snest-2-1", {"learning_rate": [10.0], "time_ratio": [0.01]}),
    ]:
        out = tmp / f"{cell}.npz"
        settings = dict(seed=0, max_iter=600, log_every=0, precision="float64", perplexity=30.0)
        snest.embed_cell(
            tmp / "school", cell, out, grid, n_restarts=2, stopping=FULL_BUDGET, **settings
        )
        files.append(out)
    return tmp, files


def test_table_puts_the_paper_beside_ours(school_runs):
    _, files = school_runs
    df = snest.kl_table(files, REPO / "config" / "paper_values" / "snest_table1.csv")
    assert list(df["cell"]) == ["tsne-2", "snest-2-1", "tsne-3"]  # sorted by budget
    assert runs.load_runs(files[0])["meta"]["precision"] == "float64"
    row = df.set_index("cell").loc["tsne-2"]
    assert row["paper_kl"] == 0.61 and row["runs"] == "2/2"
    assert row["diff"] == pytest.approx(row["kl"] - 0.61, abs=1e-4)
    # the same budget (3): SNEST R^{2,1} and t-SNE R^3 compete, one wins
    winners = set(df[df["budget"] == 3]["winner_in_budget"])
    assert len(winners) == 1 and winners <= {"SNEST R^{2,1}", "t-SNE R^3"}
    matrix = snest.kl_matrix(df, ["school"])
    assert matrix.shape == (3, 2) and "(0.61)" in matrix.iloc[0]["school"]
    claims = snest.space_time_claims(df)
    assert list(claims["rival"]) == [df.set_index("cell").loc["tsne-3", "kl"]]


def test_figures_are_written(school_runs, tmp_path):
    tmp, files = school_runs
    snest.figure("fig2a", tmp_path / "fig2a", files[2], tmp / "school")
    snest.figure("fig2b", tmp_path / "fig2b")
    for stem in ("fig2a", "fig2b"):
        for ext in ("png", "pdf"):
            assert (tmp_path / f"{stem}.{ext}").stat().st_size > 1000
    with pytest.raises(ValueError, match="shows SNEST R\\^\\{2,1\\}"):
        snest.figure("fig2a", tmp_path / "bad", files[0], tmp / "school")


def test_paper_values_cover_table_1():
    paper = pd.read_csv(REPO / "config" / "paper_values" / "snest_table1.csv")
    assert len(paper) == 9 * 6 and paper["kl"].between(0.1, 5).all()


def test_abandoning_losing_runs_keeps_the_best_run_on_school(school_runs, tmp_path):
    """The abandonment test (margin 0, rate over 250 epochs) on a small SCHOOL grid: the run
    that is best at the full budget is never abandoned, so the cell's minimal KL is the same,
    while some losing runs stop early."""
    tmp, _ = school_runs
    grid = {"learning_rate": [10.0, 100.0], "time_ratio": [0.01]}
    abandon = {"rate_window": 250, "plateau_tol": 0.0, "abandon_margin": 0.0}
    out = {}
    for name, stopping in (("full", FULL_BUDGET), ("abandon", abandon)):
        out[name] = tmp_path / f"{name}.npz"
        snest.embed_cell(
            tmp / "school", "snest-3-1", out[name], grid, n_restarts=4, seed=0, max_iter=5000,
            log_every=0, stopping=stopping, precision="float64", perplexity=30.0,
        )  # fmt: skip
    full, cut = (runs.load_runs(out[k]) for k in ("full", "abandon"))
    same = ("learning_rate", "seed", "cost", "n_iter")
    assert {k: cut["best"][k] for k in same} == {k: full["best"][k] for k in same}
    stops = [r["stop"] for r in cut["runs"]]
    assert "abandoned" in stops, stops
    spent = sum(r["n_iter"] for r in cut["runs"])
    assert spent < sum(r["n_iter"] for r in full["runs"])


def test_a_vectors_artifact_runs_on_its_perplexity_P(tmp_path):
    """A user's vectors dataset joins Table 1 through t-SNE's joint P at the perplexity."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 4)), rng.normal(size=(20, 4)) + 6.0])
    art = artifacts.Artifact(
        kind="vectors", arrays={"X": X}, items=pd.DataFrame({"name": map(str, range(40))}),
        meta={},
    )  # fmt: skip
    artifacts.save(art, tmp_path / "blobs", "blobs")
    settings = dict(seed=0, max_iter=200, log_every=0, precision="float64", stopping=FULL_BUDGET)
    out = tmp_path / "tsne-2.npz"
    snest.embed_cell(tmp_path / "blobs", "tsne-2", out, {"learning_rate": [10.0]}, 1,
                     perplexity=10.0, **settings)  # fmt: skip
    best = runs.load_runs(out)["best"]
    assert np.isfinite(best["cost"]) and best["cost"] > 0
    with pytest.raises(ValueError, match="needs more than 41 points, got 40"):
        snest.embed_cell(tmp_path / "blobs", "tsne-2", out, {"learning_rate": [10.0]}, 1,
                         perplexity=40.0, **settings)  # fmt: skip
