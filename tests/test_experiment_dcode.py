"""D-CODE experiment glue: subsets, test papers, Table 2 jobs and aggregation, figures, Fig. 3
claim; the workflow's steps run as its rules run them."""

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from embedlab import artifacts, runs, steps
from embedlab.artifacts import Artifact
from embedlab.datasets.dcode_synthetic import build as build_synthetic
from embedlab.evaluate.ranking import paper_word_weights, true_author_ranks
from embedlab.experiments.dcode import figures, fits, rank, subsets, validation
from embedlab.experiments.dcode import table as table2
from embedlab.experiments.dcode.settings import RankSettings, SyntheticFigureSettings
from embedlab.experiments.dcode.subsets import RankSetup
from embedlab.methods.cooc_lle import DegenerateEmbeddingError
from embedlab.methods.dynamic_pca import DynamicPCA
from embedlab.plots import dcode as plots
from embedlab.plots.common import save_figure

from .conftest import REPO


def ranks_of(method, params, counts, pw, pa, words="set"):
    """Ranks of the (paper, true author) pairs by a non-D-CODE method fitted on ``counts``."""
    L = fits.method_log_p(method, params, counts, seed=0)
    return true_author_ranks(L, paper_word_weights(pw, words), pa)


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


def rank_settings(**changes) -> dict:
    """Complete dcode.rank settings for the toy corpus (what the rule passes)."""
    settings = {
        "observations": ["counts", "per_token"],
        "prediction": "predictive",
        "paper_words": "set",
        "subsets": 3,
        "seed": 0,
        "fit_step": 3,
        "pool": [8, 20],
        "methods": ["dcode", "dcode_mle", "static_dcode", "dynamic_pca"],
        "references": ["chance"],
        "params": {"dynamic_pca": {"window": 2}},
        "grid": {"transition_var": [0.1, 1.0], "initial_var": [1.0, 10.0]},
        "val_subsets": 1,
        "val_steps": 2,
        "grid_extensions": 1,
    }
    return {**settings, **changes}


def run_rank(corpus_dir, size, observation, out, **changes) -> dict:
    """Run the dcode.rank step as its rule does; the result file's contents."""
    corpus = [str(corpus_dir / name) for name in ("data.npz", "items.tsv", "meta.json")]
    a, w = size
    arguments = dict(corpus=corpus, result=str(out), observation=observation, a=str(a), w=str(w))
    steps.call("dcode.rank", rank_settings(**changes), arguments)
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def toy_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dcode") / "toy"
    artifacts.save(toy_corpus(), folder, "toy")
    return folder


def test_prolific_pool_and_subsets_are_deterministic():
    art = toy_corpus()
    authors, words = subsets.prolific(art, 4, 10, up_to=3)
    pa = art.arrays["paper_authors"].toarray()[art.arrays["paper_step"] <= 3]
    n_papers = pa.sum(axis=0)
    assert n_papers[authors].min() >= np.delete(n_papers, authors).max()
    assert len(words) == 10
    a1, w1 = subsets.draw_subset((authors, words), (3, 5), seed=7)
    a2, w2 = subsets.draw_subset((authors, words), (3, 5), seed=7)
    assert np.array_equal(a1, a2) and np.array_equal(w1, w2)
    assert set(a1) <= set(authors) and set(w1) <= set(words)
    with pytest.raises(ValueError, match="larger than the pool"):
        subsets.draw_subset((authors, words), (5, 5), seed=0)
    with pytest.raises(ValueError, match="authors have papers"):
        subsets.prolific(art, 99, 5, up_to=3)


def test_test_papers_keep_only_subset_authors():
    art = toy_corpus()
    authors = np.array([0, 1, 2])
    words = np.arange(12)
    pw, pa = subsets.test_papers(art, authors, words, step=4)
    full = art.arrays["paper_authors"].toarray()[art.arrays["paper_step"] == 4][:, authors]
    assert len(pa) == int((full.sum(axis=1) > 0).sum())
    assert pw.shape[1] == 12 and all(a.max() < 3 for a in pa)


def test_lle_ranks_every_subset_author_and_unplaced_ones_last():
    """LLE cannot place an author without counts in the last fitted step; it is still a
    candidate (ranked below every placed author) and its papers still count, so LLE is scored
    on the same candidates and (paper, true author) pairs as the other methods."""
    art = toy_corpus()
    authors, words = np.arange(N_AUTHORS), np.arange(N_WORDS)
    counts = subsets.sub_counts(art, authors, words, 3)
    pw, pa = subsets.test_papers(art, authors, words, 4)
    silent = int(pa[0][0])  # a true author of a test paper ...
    counts[-1][silent] = 0.0  # ... silent in the last fitted step
    ranks = ranks_of("lle", {"n_neighbors": 4}, counts, pw, pa)
    assert ranks.size == sum(len(a) for a in pa)
    ranks_of_silent = [r for r, a in zip(ranks, np.concatenate(pa), strict=True) if a == silent]
    # the unplaced authors share the bottom positions
    unplaced = np.flatnonzero(counts[-1].sum(axis=1) == 0)
    bottom = N_AUTHORS - (unplaced.size - 1) / 2
    assert ranks_of_silent and set(ranks_of_silent) == {bottom}
    assert ranks.max() <= N_AUTHORS
    L = fits.method_log_p("lle", {"n_neighbors": 4}, counts, seed=0)
    assert L.shape == (N_AUTHORS, N_WORDS) and np.isneginf(L[unplaced]).all()
    assert np.isfinite(np.delete(L, unplaced, axis=0)).all()


def test_fit_never_sees_the_test_step_or_later():
    """Leakage guard: the count matrices of the test step (the paper's t = 13) and later do
    not change a single rank; only the test papers' own words (their input) are used."""
    art = toy_corpus()
    pool = subsets.prolific(art, 8, 20, up_to=2)
    methods = [*fits.METHODS, *fits.REFERENCES]
    params = {"dynamic_pca": {"window": 2}, "lle": {"n_neighbors": 3}}
    settings = RankSettings.from_mapping(rank_settings(fit_step=2), where="test")
    setup = RankSetup.of(art, (6, 16), "counts", settings)
    assert all(np.array_equal(x, y) for x, y in zip(setup.pool, pool, strict=True))
    before = rank.evaluate_subset(setup, 0, methods, params)
    rng = np.random.default_rng(5)
    for t in (3, 4):
        art.arrays["counts"][t] = sp.csr_matrix(rng.poisson(3.0, size=(N_AUTHORS, N_WORDS)))
    after = rank.evaluate_subset(setup, 0, methods, params)
    keys = ["method", "median_rank", "median_rank_set", "median_rank_counts", "pairs"]
    assert [[r[k] for k in keys] for r in before] == [[r[k] for k in keys] for r in after]
    assert all(r["status"] == "ok" for r in before if r["method"] != "lle")
    assert {r["status"] for r in before} <= {"ok", "degenerate"}
    # the papers ranked are those of step fit_step + 1 = 3, with a subset author
    authors, words = subsets.draw_subset(pool, (6, 16), 0)
    pw, pa = subsets.test_papers(art, authors, words, 3)
    assert before[0]["pairs"] == sum(len(a) for a in pa)


def test_lle_with_too_few_active_authors_is_counted_not_fatal():
    art = toy_corpus()
    authors, words = np.arange(N_AUTHORS), np.arange(N_WORDS)
    counts = subsets.sub_counts(art, authors, words, 3)
    counts[-1][3:] = 0.0  # at most three active authors in the last fitted step
    with pytest.raises(DegenerateEmbeddingError, match="authors active in the last year"):
        fits.method_log_p("lle", {"n_neighbors": 4}, counts, seed=0)
    log_ps = fits.subset_log_ps(
        ["lle", "chance"], {"lle": {"n_neighbors": 4}}, counts, 0, "counts", "predictive"
    )
    assert log_ps["lle"] is None and log_ps["chance"] is not None


def test_reference_rows_chance_and_empirical():
    art = toy_corpus()
    authors, words = np.arange(N_AUTHORS), np.arange(N_WORDS)
    counts = subsets.sub_counts(art, authors, words, 3)
    pw, pa = subsets.test_papers(art, authors, words, 4)
    chance = ranks_of("chance", {}, counts, pw, pa)
    assert np.all(chance == (N_AUTHORS + 1) / 2)
    L = fits.method_log_p("empirical", {}, counts, seed=0)
    total = np.sum(counts, axis=0) + 1.0
    assert np.allclose(np.exp(L), total / total.sum(axis=1, keepdims=True))
    # two communities with disjoint vocabularies: the word profile finds the community
    ranks = ranks_of("empirical", {}, counts, pw, pa)
    assert np.median(ranks) <= 6.5 < (N_AUTHORS + 1) / 2 + 3


def test_table2_glue_and_paper_values(toy_dir, tmp_path):
    files = []
    for observation in ("counts", "per_token"):
        for size in [(4, 12), (6, 16)]:
            out = tmp_path / f"rank_{observation}_{size[0]}a_{size[1]}w.json"
            data = run_rank(toy_dir, size, observation, out)
            # the per-token block runs the D-CODE variants only, the first every method
            expected = ["dcode", "dcode_mle", "static_dcode"]
            if observation == "counts":
                expected += ["dynamic_pca", "chance"]
            assert {r["method"] for r in data["rows"]} == set(expected)
            chosen = data["chosen"]["dynamic"]
            assert set(chosen) == {"transition_var", "initial_var"}
            assert data["params"]["dcode"] == chosen
            # static fits have no transitions: validated on initial_var only
            assert set(data["chosen"]["static"]) == {"initial_var"}
            static_rows = [r for r in data["validation"] if r["fit"] == "static"]
            assert all("transition_var" not in r for r in static_rows)
            # the grid grows past an edge the best value sits on, and says so
            grids = validation.grid_report(data["validation"], data["chosen"])
            for name, report in grids["dynamic"].items():
                assert chosen[name] in report["grid"]
                edge = chosen[name] in (report["grid"][0], report["grid"][-1])
                assert report["at_edge"] == edge
                if edge:
                    assert len(report["grid"]) == 3  # one extension in the toy settings
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
    long, tests, meta = table2.rank_table(files, paper)
    counts_block = long[long["observation"] == "counts"]
    assert len(counts_block) == 10 and len(long) == 16
    assert {"median_rank_set", "median_rank_counts", "mean_rank", "standard_error"} <= set(long)
    assert (long["median_rank"] == long["median_rank_set"]).all()  # the default reading
    row = counts_block[(counts_block["n_authors"] == 4) & (counts_block["method"] == "dcode")]
    ours = pd.DataFrame(json.loads(files[0].read_text())["rows"])
    values = ours[ours["method"] == "dcode"]["median_rank"].dropna()
    assert row["median_rank"].iloc[0] == pytest.approx(values.mean(), abs=0.01)
    se = values.std() / np.sqrt(len(values))
    assert row["standard_error"].iloc[0] == pytest.approx(se, abs=0.01)
    assert row["subsets_ok"].iloc[0] == len(values) and row["subsets"].iloc[0] == 3
    assert row["paper"].iloc[0] == 2.0
    # the paper's values belong to the count-weighted block only
    assert long[long["observation"] == "per_token"]["paper"].isna().all()
    claims = set(tests[tests["observation"] == "counts"]["claim"])
    assert claims == {"D-CODE < D-CODE MLE", "D-CODE < Static D-CODE", "D-CODE < Dynamic PCA"}
    md = table2.table_markdown(long, tests, meta)
    assert "## Count-weighted observations" in md and "## Per-token reading" in md
    assert "one-step predictive distribution" in md and "Wilcoxon" in md
    outputs = {name: tmp_path / f"t.{name}" for name in ("csv", "md", "md_long")}
    arguments = {"results": [str(f) for f in files], "own_results": [], "paper": str(paper),
                 **outputs}  # fmt: skip
    steps.call("dcode.table", {"left_out": {}}, arguments)
    assert outputs["md"].read_text() == md
    assert pd.read_csv(outputs["csv"])["median_rank"].tolist() == long["median_rank"].tolist()


def test_a_choice_at_the_edge_of_the_last_grid_searched_is_reported(toy_dir, tmp_path):
    """Without extensions a two-point grid always leaves the choice at an edge: the report
    must say so, and list only the values evaluated (no unevaluated extension)."""
    changes = dict(grid_extensions=0, methods=["dcode"], references=[], subsets=1)
    data = run_rank(toy_dir, (4, 12), "counts", tmp_path / "r.json", **changes)
    grids = validation.grid_report(data["validation"], data["chosen"])
    assert grids["dynamic"]["transition_var"] == {"grid": [0.1, 1.0], "at_edge": True}
    assert grids["static"]["initial_var"] == {"grid": [1.0, 10.0], "at_edge": True}


def test_grid_extension_goes_one_log_step_past_the_edge():
    assert validation._extend([0.1, 1.0, 10.0], 10.0) == [pytest.approx(100.0)]
    assert validation._extend([0.1, 1.0, 10.0], 0.1) == [pytest.approx(0.01)]
    assert validation._extend([0.1, 1.0, 10.0], 1.0) is None


def test_a_failing_method_is_an_error_not_a_dropped_subset(toy_dir, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("Internal Error")

    monkeypatch.setattr(DynamicPCA, "fit", broken)
    with pytest.raises(np.linalg.LinAlgError):
        run_rank(toy_dir, (4, 12), "counts", tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_paper_values_file_has_every_cell():
    paper = pd.read_csv(REPO / "config" / "paper_values" / "dcode_table2.csv")
    assert set(paper["method"]) == set(fits.METHODS)
    assert len(paper) == 3 * len(fits.METHODS)


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
    values = {"params": {"transition_var": 0.1, "initial_var": 10.0}, "epochs": [5, 25, 45]}
    settings = SyntheticFigureSettings.from_mapping({**values, "seed": 0}, where="test")
    return art, *figures.synthetic_ranks(art, settings)


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
    art, table, model = synthetic
    names = art.items["name"].tolist()
    epochs = [5, 25, 45]
    means, covariances = model.means_[epochs], model.conditional_covariances_[epochs]
    fig = plots.synthetic_figure(means, covariances, names, table, epochs)
    png, pdf = save_figure(fig, tmp_path / "fig3")
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0
    rng = np.random.default_rng(0)
    fig = plots.nips_figure(
        rng.normal(size=(7, 2)),
        ["A_x", "B_y"],
        list("abcde"),
        rng.integers(1, 5, size=(2, 5)),
        "1999",
    )
    save_figure(fig, tmp_path / "fig4")
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
    save_figure(plots.pairs_figure(pairs, 5), tmp_path / "fig5")
    assert (tmp_path / "fig5.png").exists()


def test_the_synthetic_figure_steps_write_the_ranks_and_draw_them_from_the_data_file(
    synthetic, tmp_path
):
    """dcode.synthetic writes the ranks and, in its data file, the means and conditional
    covariances at the three epochs; dcode.synthetic_figure draws from that file alone."""
    art, by_step, model = synthetic
    artifacts.save(art, tmp_path / "synthetic", "synthetic")
    corpus = [str(tmp_path / "synthetic" / name) for name in ("data.npz", "items.tsv", "meta.json")]
    settings = {"params": {"transition_var": 0.1, "initial_var": 10.0}, "epochs": [5, 25, 45]}
    drawn = str(tmp_path / "fig3.npz")
    arguments = {"corpus": corpus, "drawn": drawn, "ranks": str(tmp_path / "ranks.csv")}
    steps.call("dcode.synthetic", {**settings, "seed": 0}, arguments)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "ranks.csv"), by_step)
    saved, info = runs.load_npz(drawn)
    np.testing.assert_array_equal(saved["epochs"], [5, 25, 45])
    np.testing.assert_allclose(saved["means"], model.means_[[5, 25, 45]])
    np.testing.assert_allclose(saved["covariances"], model.conditional_covariances_[[5, 25, 45]])
    assert info["names"] == art.items["name"].tolist()
    assert info["frames"]["ranks"] == by_step.to_dict(orient="list")
    out = {name: str(tmp_path / f"fig3.{name}") for name in ("png", "pdf")}
    steps.call("dcode.synthetic_figure", {}, {"drawn": drawn, **out})
    assert (tmp_path / "fig3.png").stat().st_size > 0 and (tmp_path / "fig3.pdf").stat().st_size > 0


def test_the_nips_figure_steps_write_their_tables_and_figures(toy_dir, tmp_path):
    """dcode.embedding (Fig. 4) and dcode.pairs (Fig. 5) as their rules run them: the embedded
    entities (named pairs added) and one trajectory row per pair and step, and each data file
    drawn by its figure step."""
    corpus = [str(toy_dir / name) for name in ("data.npz", "items.tsv", "meta.json")]
    params = {"transition_var": 0.1, "initial_var": 10.0}
    common = {"params": params, "n_authors": 4, "n_words": 10, "seed": 0}
    drawn = str(tmp_path / "fig4.npz")
    arguments = {"corpus": corpus, "drawn": drawn, "coordinates": tmp_path / "c.csv"}
    steps.call("dcode.embedding", common, arguments)
    coordinates = pd.read_csv(tmp_path / "c.csv")
    assert coordinates["role"].value_counts().to_dict() == {"author": 4, "word": 10}
    saved, info = runs.load_npz(drawn)
    assert saved["counts"].shape == (4, 10)
    assert info["title"] == "s" and info["author_label"] == "surname"
    pd.testing.assert_frame_equal(pd.DataFrame(info["frames"]["coordinates"]), coordinates)
    out = {name: str(tmp_path / f"fig4.{name}") for name in ("png", "pdf")}
    steps.call("dcode.embedding_figure", {}, {"drawn": drawn, **out})
    assert (tmp_path / "fig4.png").stat().st_size > 0
    pairs = [["Author11_A", "w23"]]  # joins the entities unless among the most prolific
    settings = {**common, "pca": {"window": 2}, "pairs": pairs}
    drawn = str(tmp_path / "fig5.npz")
    trajectories = {"drawn": drawn, "trajectories": tmp_path / "t.csv"}
    steps.call("dcode.pairs", settings, {"corpus": corpus, **trajectories})
    table = pd.read_csv(tmp_path / "t.csv")
    assert len(table) == N_STEPS and set(table["author"]) == {"Author11_A"}
    assert table[["rank_dcode", "rank_dynamic_pca"]].max().max() <= 5  # of 4 or 5
    assert runs.load_npz(drawn)[1]["n_authors"] in (4, 5)
    out = {name: str(tmp_path / f"fig5.{name}") for name in ("png", "pdf")}
    steps.call("dcode.pairs_figure", {}, {"drawn": drawn, **out})
    assert (tmp_path / "fig5.png").stat().st_size > 0
    bad = {**settings, "pairs": [["Nobody_X", "w0"]]}
    with pytest.raises(ValueError, match="author 'Nobody_X' is not in the artifact"):
        steps.call("dcode.pairs", bad, {"corpus": corpus, **trajectories})


def test_a_block_runs_the_methods_of_its_observation_model():
    settings = RankSettings.from_mapping(rank_settings(), where="test")
    assert rank.block_methods(settings, "counts") == [*settings.methods, "chance"]
    assert rank.block_methods(settings, "per_token") == ["dcode", "dcode_mle", "static_dcode"]
    only_counts = RankSettings.from_mapping(rank_settings(observations=["counts"]), where="t")
    with pytest.raises(ValueError, match="'per_token' is not one of dcode.observations"):
        rank.block_methods(only_counts, "per_token")
