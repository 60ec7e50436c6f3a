"""D-CODE experiment glue: subsets, test papers, Table 2 aggregation, figures, Fig. 3 claim."""

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from embedlab import artifacts
from embedlab.artifacts import Artifact
from embedlab.datasets.dcode_synthetic import build as build_synthetic
from embedlab.experiments import dcode
from embedlab.plots import dcode as plots

from .conftest import REPO

N_AUTHORS, N_WORDS, N_STEPS = 12, 24, 5


def toy_corpus(seed: int = 0) -> Artifact:
    """Two communities: authors 0-5 write words 0-11, authors 6-11 words 12-23; papers of
    one or two authors of the same community, 6 papers per step."""
    rng = np.random.default_rng(seed)
    steps, words, authors = [], [], []
    for t in range(N_STEPS):
        for _ in range(6):
            group = rng.integers(2)
            team = rng.choice(6, size=rng.integers(1, 3), replace=False) + 6 * group
            bag = np.zeros(N_WORDS)
            np.add.at(bag, rng.integers(12, size=30) + 12 * group, 1.0)
            row = np.zeros(N_AUTHORS)
            row[team] = 1.0
            steps.append(t)
            words.append(bag)
            authors.append(row)
    steps = np.asarray(steps)
    pw, pa = np.asarray(words), np.asarray(authors)
    counts = [sp.csr_matrix(pa[steps == t].T @ pw[steps == t]) for t in range(N_STEPS)]
    items = pd.DataFrame(
        {
            "role": ["author"] * N_AUTHORS + ["word"] * N_WORDS,
            "index": list(range(N_AUTHORS)) + list(range(N_WORDS)),
            "name": [f"Author{i}_A" for i in range(N_AUTHORS)] + [f"w{j}" for j in range(N_WORDS)],
        }
    )
    arrays = {
        "counts": counts,
        "paper_step": steps,
        "paper_words": sp.csr_matrix(pw),
        "paper_authors": sp.csr_matrix(pa),
    }
    return Artifact("cooccurrence", arrays, items, {"name": "toy", "step_names": ["s"] * N_STEPS})


@pytest.fixture(scope="module")
def toy_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dcode") / "toy"
    artifacts.save(toy_corpus(), folder, "toy")
    return folder


def test_prolific_pool_and_subsets_are_deterministic():
    art = toy_corpus()
    authors, words = dcode.prolific(art, 4, 10, up_to=3)
    pa = art.arrays["paper_authors"].toarray()[art.arrays["paper_step"] <= 3]
    n_papers = pa.sum(axis=0)
    assert n_papers[authors].min() >= np.delete(n_papers, authors).max()
    assert len(words) == 10
    a1, w1 = dcode.draw_subset((authors, words), (3, 5), seed=7)
    a2, w2 = dcode.draw_subset((authors, words), (3, 5), seed=7)
    assert np.array_equal(a1, a2) and np.array_equal(w1, w2)
    assert set(a1) <= set(authors) and set(w1) <= set(words)
    with pytest.raises(ValueError, match="larger than the pool"):
        dcode.draw_subset((authors, words), (5, 5), seed=0)
    with pytest.raises(ValueError, match="authors have papers"):
        dcode.prolific(art, 99, 5, up_to=3)


def test_test_papers_keep_only_subset_authors():
    art = toy_corpus()
    authors = np.array([0, 1, 2])
    words = np.arange(12)
    pw, pa = dcode.test_papers(art, authors, words, step=4)
    full = art.arrays["paper_authors"].toarray()[art.arrays["paper_step"] == 4][:, authors]
    assert len(pa) == int((full.sum(axis=1) > 0).sum())
    assert pw.shape[1] == 12 and all(a.max() < 3 for a in pa)


def test_lle_ranks_every_subset_author_and_unplaced_ones_last():
    """LLE cannot place an author without counts in the last fitted step; it is still a
    candidate (ranked below every placed author) and its papers still count, so LLE is scored
    on the same candidates and (paper, true author) pairs as the other methods."""
    art = toy_corpus()
    authors, words = np.arange(N_AUTHORS), np.arange(N_WORDS)
    counts = dcode.sub_counts(art, authors, words, 3)
    pw, pa = dcode.test_papers(art, authors, words, 4)
    silent = int(pa[0][0])  # a true author of a test paper ...
    counts[-1][silent] = 0.0  # ... silent in the last fitted step
    ranks = dcode.method_ranks("lle", {"n_neighbors": 4}, counts, pw, pa, seed=0)
    assert ranks.size == sum(len(a) for a in pa)
    ranks_of_silent = [r for r, a in zip(ranks, np.concatenate(pa), strict=True) if a == silent]
    # the unplaced authors share the bottom positions
    unplaced = np.flatnonzero(counts[-1].sum(axis=1) == 0)
    bottom = N_AUTHORS - (unplaced.size - 1) / 2
    assert ranks_of_silent and set(ranks_of_silent) == {bottom}
    assert ranks.max() <= N_AUTHORS
    L = dcode.method_log_p("lle", {"n_neighbors": 4}, counts, seed=0)
    assert L.shape == (N_AUTHORS, N_WORDS) and np.isneginf(L[unplaced]).all()
    assert np.isfinite(np.delete(L, unplaced, axis=0)).all()


def test_fit_never_sees_the_test_step_or_later():
    """Leakage guard: the count matrices of the test step (the paper's t = 13) and later do
    not change a single rank; only the test papers' own words (their input) are used."""
    art = toy_corpus()
    pool = dcode.prolific(art, 8, 20, up_to=2)
    methods = [*dcode.METHODS, *dcode.REFERENCES]
    params = {"dynamic_pca": {"window": 2}, "lle": {"n_neighbors": 3}}
    before = dcode.evaluate_subset(art, pool, (6, 16), 0, 0, 2, methods, params)
    rng = np.random.default_rng(5)
    for t in (3, 4):
        art.arrays["counts"][t] = sp.csr_matrix(rng.poisson(3.0, size=(N_AUTHORS, N_WORDS)))
    after = dcode.evaluate_subset(art, pool, (6, 16), 0, 0, 2, methods, params)
    keys = ["method", "median_rank", "median_rank_set", "median_rank_counts", "pairs"]
    assert [[r[k] for k in keys] for r in before] == [[r[k] for k in keys] for r in after]
    assert all(r["status"] == "ok" for r in before if r["method"] != "lle")
    # the papers ranked are those of step fit_step + 1 = 3, with a subset author
    authors, words = dcode.draw_subset(pool, (6, 16), 0)
    pw, pa = dcode.test_papers(art, authors, words, 3)
    assert before[0]["pairs"] == sum(len(a) for a in pa)


def test_reference_rows_chance_and_empirical():
    art = toy_corpus()
    authors, words = np.arange(N_AUTHORS), np.arange(N_WORDS)
    counts = dcode.sub_counts(art, authors, words, 3)
    pw, pa = dcode.test_papers(art, authors, words, 4)
    chance = dcode.method_ranks("chance", {}, counts, pw, pa, seed=0)
    assert np.all(chance == (N_AUTHORS + 1) / 2)
    L = dcode.method_log_p("empirical", {}, counts, seed=0)
    total = np.sum(counts, axis=0) + 1.0
    assert np.allclose(np.exp(L), total / total.sum(axis=1, keepdims=True))
    # two communities with disjoint vocabularies: the word profile finds the community
    both = dcode.method_ranks("empirical", {}, counts, pw, pa, seed=0, words="both")
    assert set(both) == {"set", "counts"}
    assert np.median(both["set"]) <= 6.5 < (N_AUTHORS + 1) / 2 + 3


def test_table2_glue_and_paper_values(toy_dir, tmp_path):
    grid = {"transition_var": [0.1, 1.0], "initial_var": [10.0]}
    files = []
    for size in [(4, 12), (6, 16)]:
        out = tmp_path / f"rank_{size[0]}.json"
        rows = dcode.table2_size(
            toy_dir,
            size,
            out,
            n_subsets=2,
            seed=0,
            fit_step=3,
            pool_size=(8, 20),
            methods=["dcode", "static_dcode", "dynamic_pca"],
            params={"dynamic_pca": {"window": 2}},
            grid=grid,
            val_subsets=1,
        )
        assert set(rows["method"]) == {"dcode", "static_dcode", "dynamic_pca"}
        data = json.loads(out.read_text())
        assert data["chosen"]["dcode"]["transition_var"] in grid["transition_var"]
        assert data["params"]["dcode"] == data["chosen"]["dcode"]
        # static variants have no transition: validated on initial_var only
        static_points = {
            (r["transition_var"], r["initial_var"])
            for r in data["validation"]
            if r["variant"] == "static_dcode"
        }
        assert len(static_points) == 1
        files.append(out)
    paper = tmp_path / "paper.csv"
    pd.DataFrame(
        {
            "n_authors": [4, 6],
            "n_words": [12, 16],
            "method": ["dcode", "dcode"],
            "median_rank": [2.0, 3.0],
        }
    ).to_csv(paper, index=False)
    long, layout, claims = dcode.rank_table(files, paper)
    assert len(long) == 6 and len(layout) == 2
    assert {"median_rank_set", "median_rank_counts", "mean_rank"} <= set(long.columns)
    assert (long["median_rank"] == long["median_rank_set"]).all()  # the default reading
    row = long[(long["n_authors"] == 4) & (long["method"] == "dcode")].iloc[0]
    ours = pd.DataFrame(json.loads(files[0].read_text())["rows"])
    expected = ours[ours["method"] == "dcode"]["median_rank"].mean()
    assert row["median_rank"] == pytest.approx(expected, abs=0.01)
    assert row["paper"] == 2.0
    assert set(claims["claim"]) == {"D-CODE < Static D-CODE", "D-CODE < Dynamic PCA"}
    assert claims["holds_paper"].isna().all()  # the toy paper values name D-CODE only


def test_paper_values_file_has_every_cell():
    paper = pd.read_csv(REPO / "config" / "paper_values" / "dcode_table2.csv")
    assert set(paper["method"]) == set(dcode.METHODS)
    assert len(paper) == 3 * len(dcode.METHODS)


def test_ellipse_boundary_has_the_95_percent_radius():
    cov = np.array([[4.0, 1.2], [1.2, 1.0]])
    width, height, angle = plots.ellipse_axes(cov)
    theta = np.radians(angle)
    major = 0.5 * width * np.array([np.cos(theta), np.sin(theta)])
    minor = 0.5 * height * np.array([-np.sin(theta), np.cos(theta)])
    for point in (major, minor):
        assert point @ np.linalg.solve(cov, point) == pytest.approx(plots.CHI2_95_2D)
    with pytest.raises(ValueError, match="positive semi-definite"):
        plots.ellipse_axes(np.array([[1.0, 0.0], [0.0, -1.0]]))


@pytest.fixture(scope="module")
def synthetic():
    art = build_synthetic(
        {}, n_steps=50, change_start=10, change_end=40, n_background_words=3, background_rate=9
    )
    return art, *dcode.synthetic_ranks(art, {"transition_var": 0.1, "initial_var": 10.0})


def test_synthetic_ranks_move_from_2_to_5_and_dcode_moves_first(synthetic):
    """Fig. 3(D): X authors rank ~2 (mean of 1, 2, 3) before the change, ~5 after it; D-CODE's
    posterior uncertainty lets it leave rank 2 no later than the MLE variant."""
    _, table, _ = synthetic
    assert table["dcode"].iloc[:8].mean() == pytest.approx(2.0, abs=0.3)
    assert table["dcode"].iloc[-5:].mean() == pytest.approx(5.0, abs=0.3)
    assert table["dcode_mle"].iloc[-5:].mean() == pytest.approx(5.0, abs=0.3)
    first = {v: int(np.argmax(table[v].to_numpy() > 3.5)) for v in ("dcode", "dcode_mle")}
    assert first["dcode"] <= first["dcode_mle"]


def test_figures_draw(synthetic, tmp_path):
    art, table, models = synthetic
    names = art.items["name"].tolist()
    fig = plots.synthetic_figure(models["dcode"], names, table, [5, 25, 45])
    png, pdf = plots.save_figure(fig, tmp_path / "fig3")
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0
    rng = np.random.default_rng(0)
    fig = plots.nips_figure(
        rng.normal(size=(7, 2)),
        ["A_x", "B_y"],
        list("abcde"),
        rng.integers(1, 5, size=(2, 5)),
        "1999",
    )
    plots.save_figure(fig, tmp_path / "fig4")
    pairs = pd.DataFrame(
        {
            "author": "A_x",
            "word": "a",
            "step": range(3),
            "rank_dcode": [1, 2, 1],
            "rank_dynamic_pca": [2, 2, 1],
            "p_author_given_word": [0.1, 0, 0.3],
        }
    )
    plots.save_figure(plots.pairs_figure(pairs, 5), tmp_path / "fig5")
    assert (tmp_path / "fig5.png").exists()
