"""t-STE paper glue: Fig. 2 protocol on a tiny planted data set, tables, claims, maps, figures."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from embedlab import artifacts, steps
from embedlab.experiments.tste import authors, claims, fig2, maps, paper_text, protocol
from embedlab.experiments.tste.settings import AuthorsSettings, KFormSolver
from embedlab.plots.common import save_figure

from .conftest import REPO


def planted_triplets(n_per_class=12, n_classes=3, m=1500, seed=0):
    """Items in well-separated 2-D clusters; triplets (i, j, l) with d_ij < d_il, true labels."""
    rng = np.random.default_rng(seed)
    centres = 6.0 * rng.normal(size=(n_classes, 2))
    labels = np.repeat(np.arange(n_classes), n_per_class)
    X = centres[labels] + rng.normal(size=(len(labels), 2))
    n = len(X)
    trip = []
    while len(trip) < m:
        i, j, k = rng.choice(n, 3, replace=False)
        dj, dk = np.sum((X[i] - X[j]) ** 2), np.sum((X[i] - X[k]) ** 2)
        trip.append((i, j, k) if dj < dk else (i, k, j))
    items = pd.DataFrame({"name": [str(i) for i in range(n)], "genre": [f"g{c}" for c in labels]})
    return artifacts.Artifact(
        "triplets",
        {"triplets": np.array(trip, dtype=np.int64), "labels": labels},
        items,
        {"n": n, "name": "planted"},
    )


def _job(folder, reading, method):
    """The paths and wildcards that a metrics job of ``method`` on artifact ``folder`` gets."""
    data = [str(folder / name) for name in ("data.npz", "items.tsv", "meta.json")]
    return {"data": data, "reading": reading, "dataset": folder.name, "method": method}


def _authors_settings(dims, max_iter, grid=None, solver=None):
    """The settings of an authors' search or part job (2 folds, seed 0, all triplets)."""
    return {"dims": dims, "n_folds": 2, "seed": 0, "max_iter": max_iter, "max_triplets": None,
            "grid": grid or {}, "nn_training": "first", "solver": solver or {}}  # fmt: skip


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tste") / "planted"
    artifacts.save(planted_triplets(), folder, "planted")
    return folder


@pytest.fixture(scope="module")
def metrics(planted, tmp_path_factory):
    out = tmp_path_factory.mktemp("metrics")
    files = []
    for method, grid in [
        ("t-STE-X", {}),
        ("STE-X", {}),
        ("CKL-X", {"mu": [0.01, 0.1]}),
        ("GNMDS-K", {"lam": [0.0, 0.1]}),
    ]:
        df = paper_text.evaluate_method(planted, method, [2, 3], 2, grid, seed=0, max_iter=150)
        files.append(out / f"{method}.csv")
        df.to_csv(files[-1], index=False)
    return files


def test_protocol_rows_and_errors(metrics):
    df = pd.concat([pd.read_csv(f) for f in metrics])
    assert len(df) == 4 * 2 * 2  # methods x dims x folds
    assert set(df["fold"]) == {0, 1} and set(df["dims"]) == {2, 3}
    assert df["generalisation_error"].between(0, 1).all()
    # planted clusters in 2-D: a good triplet embedding generalises and separates the classes
    tste_2d = df[(df["method"] == "t-STE-X") & (df["dims"] == 2)]
    assert tste_2d["generalisation_error"].mean() < 0.25
    assert tste_2d["loo_1nn_error"].mean() < 0.2
    # the validated parameter is one of the grid's values, with one validation error per value
    ckl = df[df["method"] == "CKL-X"]
    assert all(json.loads(p)["mu"] in (0.01, 0.1) for p in ckl["params"])
    assert all(len(json.loads(v)) == 2 for v in ckl["validation_errors"])


def test_table_has_one_row_per_dim_and_fold_means(metrics):
    t = fig2.fig2_table(metrics)
    assert list(t["dims"]) == [2, 3]
    df = pd.read_csv(metrics[0])
    want = df[df["dims"] == 2]["generalisation_error"].mean()
    assert t.loc[0, "t-STE-X gen"] == pytest.approx(want, abs=1e-4)
    assert list(t.columns[1:5]) == ["GNMDS-K gen", "CKL-X gen", "STE-X gen", "t-STE-X gen"]


def test_tables_say_how_many_folds_they_average():
    assert fig2.describe_folds({"GNMDS-K": 5, "STE-X": 5}) == "folds: 5"
    assert (
        fig2.describe_folds({"GNMDS-K": 5, "STE-X": 10}) == "folds per method: GNMDS-K 5, STE-X 10"
    )


def _fake_table(gen, nn):
    t = pd.DataFrame({"dims": [2]})
    for m, g in gen.items():
        t[f"{m} gen"] = [g]
    for m, e in nn.items():
        t[f"{m} 1nn"] = [e]
    return t


def test_claims_verdicts_follow_the_numbers():
    paper = REPO / "config/paper_values/tste_claims.csv"
    good = _fake_table({"STE-X": 0.35, "t-STE-X": 0.36}, {"STE-X": 0.85, "t-STE-X": 0.66})
    bad = _fake_table({"STE-X": 0.12, "t-STE-X": 0.36}, {"STE-X": 0.60, "t-STE-X": 0.42})
    music_good = _fake_table({"STE-X": 0.2, "t-STE-X": 0.2}, {"STE-X": 0.6, "t-STE-X": 0.5})
    music_bad = _fake_table({"STE-X": 0.2, "t-STE-X": 0.2}, {"STE-X": 0.4, "t-STE-X": 0.5})
    ok = claims.claims_table({"mnist_triplets_1k": good, "music": music_good}, paper)
    ko = claims.claims_table({"mnist_triplets_1k": bad, "music": music_bad}, paper)
    assert list(ok["holds"]) == [True, True, True, True]
    assert list(ko["holds"]) == [False, False, False, False]


def test_claims_name_the_methods_a_configuration_did_not_run():
    """A claim over 'all' or 'other' methods is judged on those run and names the rest; the
    t-STE-X claim names none."""
    paper = REPO / "config/paper_values/tste_claims.csv"
    mnist = _fake_table({"STE-X": 0.35, "t-STE-X": 0.36}, {"STE-X": 0.85, "t-STE-X": 0.66})
    music = _fake_table({"STE-X": 0.2, "t-STE-X": 0.2}, {"STE-X": 0.6, "t-STE-X": 0.5})
    found = claims.claims_table({"mnist_triplets_1k": mnist, "music": music}, paper)
    lacking = "not run in this configuration: GNMDS-K, GNMDS-X, CKL-K, CKL-X, STE-K"
    by_claim = dict(zip(found["claim"], found["ours"], strict=True))
    for claim, ours in by_claim.items():
        assert ours.endswith(lacking) != ("t-STE 2-D 1-NN" in claim), (claim, ours)
    assert fig2.describe_not_run(protocol.METHOD_ORDER) == ""


def test_a_collapsed_fit_is_flagged_degenerate(tmp_path):
    """Ties count as correct under the authors' error, so one point scores 0: the tied share
    exposes it in the table, its caption, the claims and the figure -- for the fold fits
    and, separately, for the 1-NN fit (MNIST trains it on 10 % of the triplets, where a
    search that picked a degenerate value on its tie-counting validation collapses it while
    the fold fits on 90 % do not)."""
    from embedlab.evaluate.triplets import tied_fraction, triplet_error

    trip = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    collapsed = np.zeros((3, 2))
    assert triplet_error(collapsed, trip, ties="correct") == 0.0
    assert tied_fraction(collapsed, trip) == 1.0
    assert tied_fraction(np.array([[0.0, 0], [1, 0], [3, 0]]), trip) == 0.0
    rows = []
    # method: (tied share of the 1-NN fit, of the fold fits, their generalisation error)
    for method, (nn_tied, tied, gen) in {
        "GNMDS-K": (1.0, 1.0, 0.0),
        "STE-K": (1.0, 0.0, 0.35),
        "STE-X": (0.0, 0.0, 0.3),
        "t-STE-X": (0.0, 0.0, 0.3),
    }.items():
        for fold, g, nn, t in (
            (-1, np.nan, 0.9, nn_tied),
            (0, gen, np.nan, tied),
            (1, gen, np.nan, tied),
        ):
            rows.append(
                {"dataset": "music", "method": method, "dims": 2, "fold": fold,
                 "generalisation_error": g, "loo_1nn_error": nn, "tied_fraction": t}
            )  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "m.csv", index=False)
    t = fig2.fig2_table([tmp_path / "m.csv"])
    assert t.loc[0, "GNMDS-K gen tied"] == 1.0 and t.loc[0, "STE-X gen tied"] == 0.0
    assert t.loc[0, "STE-K gen tied"] == 0.0 and t.loc[0, "STE-K 1nn tied"] == 1.0
    assert fig2.degenerate_fits(t) == {"GNMDS-K": [2]}
    assert fig2.degenerate_fits(t, "1nn") == {"GNMDS-K": [2], "STE-K": [2]}
    assert fig2.describe_degenerate({"GNMDS-K": [2, 4, 6]}) == "GNMDS-K at dims 2-6 (3 dims)"
    paper = REPO / "config/paper_values/tste_claims.csv"
    found = claims.claims_table({"music": t}, paper)
    music = found[found["dataset"] == "music"]  # the genre 1-NN claim
    assert list(music["degenerate"]) == ["GNMDS-K, STE-K"] * len(music)
    mnist = t.assign(dataset="mnist")
    found = claims.claims_table({"mnist_triplets_1k_authors": mnist}, paper)
    by_claim = dict(zip(found["claim"], found["degenerate"], strict=True))
    assert by_claim["all methods satisfy 63-66% of held-out triplets in 2-D"] == "GNMDS-K"
    assert by_claim["all other methods above 80%"] == "GNMDS-K, STE-K"
    pd.DataFrame(rows).drop(columns="tied_fraction").to_csv(tmp_path / "old.csv", index=False)
    with pytest.raises(ValueError, match="lack tied_fraction"):
        fig2.fig2_table([tmp_path / "m.csv", tmp_path / "old.csv"])


def test_maps_and_figures(planted, metrics, tmp_path):
    for method in ("t-STE-X", "STE-X"):
        maps.embed_map(
            planted, method, tmp_path / f"{method}.npz", seed=0, max_iter=100,
            protocol="paper_text",
        )  # fmt: skip
    Y, labels, meta = maps.load_map(tmp_path / "t-STE-X.npz")
    assert Y.shape == (36, 2) and len(labels) == 36 and meta["method"] == "t-STE-X"
    assert meta["training_error"] < 0.2
    from embedlab.plots import tste as plots

    t = fig2.fig2_table(metrics)
    for name, fig in [
        (
            "fig2",
            plots.fig2(
                {"planted": t, "again": t},
                degenerate={"again": {"gen": {"STE-X": [2]}, "1nn": {"STE-X": [2]}}},
            ),
        ),
        ("fig3", plots.fig3([maps.load_map(tmp_path / f"{m}.npz") for m in ("STE-X", "t-STE-X")])),
        ("fig4", plots.fig4(Y, artifacts.load(planted).items["genre"].to_numpy(), meta)),
    ]:
        png, pdf = save_figure(fig, tmp_path / name)
        assert png.stat().st_size > 1000 and pdf.stat().st_size > 1000


def test_table_claims_map_and_figure_steps(planted, metrics, tmp_path):
    """The steps after the metrics: the Fig. 2 table of a protocol's prefix, its claims (with
    the own datasets left out), a map and the figures drawn from them."""
    table = {"csv": str(tmp_path / "tste_planted.csv"), "md": str(tmp_path / "tste_planted.md")}
    steps.call(
        "tste.table", {}, {**table, "metrics": metrics, "prefix": "tste", "dataset": "planted"}
    )
    assert "t-STE Fig. 2 on planted: mean over folds" in Path(table["md"]).read_text()
    pd.testing.assert_frame_equal(pd.read_csv(table["csv"]), fig2.fig2_table(metrics))
    paper = str(REPO / "config/paper_values/tste_claims.csv")
    claimed = {"fig2_tables": [table["csv"]], "paper": paper, "prefix": "tste_authors",
               "csv": str(tmp_path / "c.csv"), "md": str(tmp_path / "c.md")}  # fmt: skip
    steps.call("tste.claims", {"left_out": {"mine": "too small"}}, claimed)
    text = Path(claimed["md"]).read_text()
    assert "(protocol authors_code: the authors' released code" in text and "mine" in text
    data = _job(planted, "tste", "t-STE-X")["data"]
    settings = {"seed": 0, "protocol": "paper_text", "max_iter": 50, "max_triplets": None,
                "solver": {}}  # fmt: skip
    made = {"data": data, "maps": "tste", "dataset": "planted", "method": "t-STE-X"}
    steps.call("tste.embedding", settings, {**made, "npz": str(tmp_path / "m.npz")})
    assert maps.load_map(tmp_path / "m.npz")[2]["protocol"] == "paper_text"
    with pytest.raises(ValueError, match="solver settings belong to the authors' readings"):
        steps.call("tste.embedding", {**settings, "solver": {"alpha": 1.0}}, {**made, "npz": "x"})
    for fig, sources in [("fig2", [table["csv"]]), ("fig4", [str(tmp_path / "m.npz")])]:
        drawn = {"png": str(tmp_path / f"{fig}.png"), "pdf": str(tmp_path / f"{fig}.pdf")}
        named = {"sources": sources, "prefix": "tste", "fig": fig}
        steps.call("tste.figure", {}, {**drawn, **named, "data": data if fig == "fig4" else []})
        assert Path(drawn["png"]).stat().st_size > 1000


def test_bad_input_fails_early(planted, tmp_path):
    with pytest.raises(ValueError, match="unknown method"):
        protocol.make_estimator("PCA-X", 2)
    with pytest.raises(ValueError, match="one parameter"):
        paper_text.evaluate_method(
            planted, "CKL-X", [2], 2, {"mu": [0.1], "lam": [0.0]}, seed=0, max_iter=10
        )
    art = artifacts.load(planted)
    art.arrays.pop("labels")
    artifacts.save(art, tmp_path / "nolabels", "nolabels")
    with pytest.raises(ValueError, match="labels"):
        protocol.load_triplets(tmp_path / "nolabels")


def test_k_forms_read_every_dimension_off_one_kernel(planted):
    trip, n, _ = protocol.load_triplets(planted)
    fits = paper_text.fit_embeddings("STE-K", [3, 2], trip, n, {"lam": 0.01}, seed=0, max_iter=30)
    assert sorted(fits) == [2, 3]
    Y2, Y3 = fits[2][0], fits[3][0]
    assert Y2.shape == (n, 2) and Y3.shape == (n, 3)
    np.testing.assert_allclose(Y3[:, :2], Y2, atol=1e-10)  # nested MDS truncations
    assert fits[2][1] == fits[3][1]  # one fit, same iteration count
    x_fits = paper_text.fit_embeddings("STE-X", [2, 3], trip, n, {}, seed=0, max_iter=30)
    assert x_fits[2][0].shape == (n, 2) and x_fits[3][0].shape == (n, 3)


def test_folds_used_evaluates_the_first_folds_of_the_same_split(planted, metrics):
    full = pd.read_csv(metrics[0])  # t-STE-X, 2 folds
    first = paper_text.evaluate_method(
        planted, "t-STE-X", [2, 3], 2, seed=0, max_iter=150, folds_used=1
    )
    assert set(first["fold"]) == {0}
    want = full[full["fold"] == 0].reset_index(drop=True)
    np.testing.assert_allclose(first["generalisation_error"], want["generalisation_error"])
    assert fig2.folds_per_method([metrics[0]]) == {"t-STE-X": 2}
    with pytest.raises(ValueError, match="folds_used"):
        paper_text.evaluate_method(planted, "t-STE-X", [2], 2, seed=0, max_iter=10, folds_used=3)


@pytest.mark.parametrize(
    "method, grid, folds_used",
    [
        ("GNMDS-K", {"lam": [0.0, 0.1, 1.0]}, None),
        ("CKL-X", {"mu": [0.01, 0.1]}, 1),
        ("t-STE-X", {}, 1),
    ],
)
def test_paper_text_jobs_write_the_one_call_csv(planted, tmp_path, method, grid, folds_used):
    """The workflow's steps (one per validated grid value, one per fold used, the merge)
    write evaluate_method's metrics CSV cell for cell but the measured seconds; the K form's
    dimensions choose different values (one kernel fit per value and fold)."""
    from embedlab import tables

    solver = {"solver": "accelerated", "precision": "float32", "tol": 1e-7}
    settings = {"dims": [2, 3, 5], "n_folds": 2, "seed": 0, "max_iter": 60,
                "kform_solver": solver, "max_triplets": 1200, "grid": grid}  # fmt: skip
    job = _job(planted, "tste", method)
    search = [str(tmp_path / f"search{k}.npz") for k in range(len(next(iter(grid.values()), [])))]
    for k, npz in enumerate(search):
        steps.call("tste.search", settings, {**job, "npz": npz, "index": str(k)})
    parts = [str(tmp_path / f"fold{k}.csv") for k in range(folds_used or 2)]
    for k, csv in enumerate(parts):
        arguments = {**job, "search_files": search, "csv": csv, "part": f"fold{k}"}
        steps.call("tste.fold", settings, arguments)
    merged = {key: job[key] for key in ("reading", "dataset", "method")}
    steps.call("tste.merge", {}, {**merged, "parts": parts, "csv": str(tmp_path / "jobs.csv")})
    one = paper_text.evaluate_method(
        planted, method, [2, 3, 5], 2, grid, seed=0, max_iter=60, max_triplets=1200,
        folds_used=folds_used, kform_solver=KFormSolver(**solver),
    )  # fmt: skip
    tables.write_csv(one, tmp_path / "one.csv", measured=["seconds"])

    def cells(name):  # every cell as written, but the measured seconds
        df = pd.read_csv(tmp_path / name, dtype=str, keep_default_na=False)
        return df.drop(columns="seconds")

    pd.testing.assert_frame_equal(cells("jobs.csv"), cells("one.csv"), check_exact=True)
    assert len(one) == 3 * (folds_used or 2)
    if method == "GNMDS-K":
        assert one["params"].nunique() > 1


def test_a_part_refuses_search_files_of_another_grid(planted, tmp_path):
    """A part job reads the search files of its grid, in grid order: files of other values
    (a stale search) fail before any fit, naming the grid."""
    settings = {"dims": [2], "n_folds": 2, "seed": 0, "max_iter": 5, "max_triplets": None,
                "kform_solver": {"solver": "accelerated", "precision": "float32", "tol": 1e-7},
                "grid": {"mu": [0.01, 0.1]}}  # fmt: skip
    job = _job(planted, "tste", "CKL-X")
    search = [str(tmp_path / f"s{k}.npz") for k in range(2)]
    for k, npz in enumerate(search):
        steps.call("tste.search", settings, {**job, "npz": npz, "index": str(k)})
    part = {**job, "search_files": search[::-1], "csv": str(tmp_path / "f.csv"), "part": "fold0"}
    with pytest.raises(ValueError, match=r"the grid is \{'mu': \[0.01, 0.1\]\}"):
        steps.call("tste.fold", settings, part)
    with pytest.raises(ValueError, match="no value 2 in the grid"):
        steps.call("tste.search", settings, {**job, "npz": search[0], "index": "2"})
    assert not (tmp_path / "f.csv").exists()


def test_validation_chooses_the_first_lowest_value_per_dimension():
    best, errors = paper_text.choose_per_dimension(
        [0.0, 0.1, 1.0], [{2: 0.3, 4: 0.2}, {2: 0.1, 4: 0.2}, {2: 0.1, 4: 0.25}]
    )
    assert best == {2: 0.1, 4: 0.0} and errors == {2: [0.3, 0.1, 0.1], 4: [0.2, 0.2, 0.25]}
    chosen = paper_text.Validation.choose("lam", [0.0, 0.1], [{2: 0.3}, {2: 0.1}]).chosen
    assert chosen == {2: {"lam": 0.1}}
    with pytest.raises(ValueError, match="different dims"):
        paper_text.choose_per_dimension([0.0, 0.1], [{2: 0.3}, {4: 0.1}])


# --------------------------------------------------------------------------------------
# the authors' released protocol


@pytest.fixture(scope="module")
def planted_self(tmp_path_factory):
    """The planted set with self-triplets (i, i, l) added, marked as the authors' rule does."""
    art = planted_triplets(m=1000, seed=1)
    T = art["triplets"]
    selfs = np.stack([T[:100, 0], T[:100, 0], T[:100, 2]], axis=1)
    art.arrays["triplets"] = np.vstack([T, selfs])
    art.meta["self_triplets"] = True
    folder = tmp_path_factory.mktemp("tste_authors") / "planted_self"
    artifacts.save(art, folder, "planted_self")
    return folder


def test_authors_search_split_is_the_first_tenth_in_generation_order(monkeypatch):
    assert authors.search_split(100000, 10) == 10000
    assert authors.search_split(9090, 10) == 909
    seen = []

    def fake_fit(method, dims, triplets, n, values, seed, max_iter, allow_self, settings):
        seen.append(triplets.copy())
        return {max(dims): (np.zeros((n, max(dims))), 1, 0.0)}, None

    monkeypatch.setattr(authors, "authors_fit", fake_fit)
    trip = np.array([[k % 7, (k + 1) % 7, (k + 2) % 7] for k in range(50)])
    settings = _authors_settings(dims=[2, 4], max_iter=None, grid={"mu": [0.0, 0.1]})
    settings = AuthorsSettings.from_mapping({**settings, "n_folds": 10}, "test")
    search = authors.authors_search("CKL-X", trip, 7, False, settings=settings)
    assert len(seen) == 2 and all(np.array_equal(s, trip[:5]) for s in seen)  # rows 0..4
    # all-zero maps: d_ij = d_il, a tie, which the authors count as correct; first on ties
    assert search.violations == [0, 0] and search.chosen == {"mu": 0.0}
    assert search.embedding is None


def test_authors_params_map_the_searched_value_onto_the_coded_objectives():
    assert authors.authors_params("GNMDS-K", {"mu": 0.2}) == {
        "learning_rate": 1.0, "init_rank": 2, "kform": "released", "loss_weight": 0.2,
        "lam": 0.8,
    }  # fmt: skip
    assert authors.authors_params("STE-K", {"lam": 0.3}) == {
        "learning_rate": 1.0, "init_rank": 2, "kform": "released", "loss_weight": 0.7,
        "lam": 0.3,
    }  # fmt: skip
    assert authors.authors_params("CKL-K", {"mu": 0.04})["unit_diagonal"] is False
    assert authors.authors_params("CKL-K", {"mu": 0.04})["kform"] == "released"
    assert authors.authors_params("CKL-X")["learning_rate"] == 1e-5
    assert authors.authors_params("GNMDS-X") == {"learning_rate": 1.0, "min_iter": 50}
    assert authors.authors_params("t-STE-X") == {"learning_rate": 2.0}
    # the authors_figure reading's solver options
    assert authors.authors_params("t-STE-X", None, {"alpha": 1, "use_log": False}) == {
        "learning_rate": 2.0, "alpha": 1, "use_log": False,
    }  # fmt: skip
    with pytest.raises(ValueError, match="no option"):
        authors.authors_params("CKL-X", None, {"use_log": False})
    with pytest.raises(ValueError, match="no option"):
        authors.authors_params("STE-X", None, {"alpha": 1})
    assert authors.authors_max_iter("STE-K", None) == 2000
    assert authors.authors_max_iter("STE-X", None) == 1000
    assert authors.authors_max_iter("STE-K", 5) == 5
    with pytest.raises(ValueError, match="searches no"):
        authors.authors_params("t-STE-X", {"mu": 0.1})


def test_authors_protocol_rows(planted_self):
    df = authors.evaluate_authors(
        planted_self, "GNMDS-K", [2, 3], 2, {"mu": [0.5, 0.9]}, seed=0, max_iter=40
    )
    assert sorted(set(df["fold"])) == [-1, 0, 1]
    nn = df[df["fold"] == -1]
    assert nn["generalisation_error"].isna().all() and nn["loo_1nn_error"].notna().all()
    folds = df[df["fold"] >= 0]
    assert folds["loo_1nn_error"].isna().all()
    assert folds["generalisation_error"].between(0, 0.5).all()
    assert len(json.loads(df["validation_errors"].iloc[0])) == 2
    assert json.loads(df["params"].iloc[0])["mu"] in (0.5, 0.9)
    t = fig2.fig2_table([_write(df, planted_self.parent / "g.csv")])
    assert list(t.columns) == [
        "dims",
        "GNMDS-K gen",
        "GNMDS-K 1nn",
        "GNMDS-K gen tied",
        "GNMDS-K 1nn tied",
    ]
    assert t.notna().all().all() and (t["GNMDS-K gen tied"] < fig2.DEGENERATE_TIED).all()
    assert fig2.folds_per_method([planted_self.parent / "g.csv"]) == {"GNMDS-K": 2}
    x = authors.evaluate_authors(
        planted_self, "t-STE-X", [2], 2, seed=0, max_iter=100, nn_training="all"
    )
    assert x.loc[x["fold"] >= 0, "generalisation_error"].mean() < 0.2
    # self-triplets are accepted only where the artifact says so
    with pytest.raises(ValueError, match="repeats"):
        paper_text.fit_embeddings("STE-X", [2], np.array([[0, 0, 1], [1, 2, 0]]), 3, {}, 0, 5)


def test_authors_jobs_reproduce_the_one_call_protocol(planted_self, tmp_path):
    """The workflow's steps (one per searched value, one per part, a merge) give the rows of
    evaluate_authors, including the K form's 1-NN fits read off the search's kernel."""
    settings = _authors_settings(dims=[2, 3], max_iter=40, grid={"mu": [0.5, 0.9]})
    job = _job(planted_self, "tste_authors", "GNMDS-K")
    search = [str(tmp_path / f"s{k}.npz") for k in range(2)]
    for k, npz in enumerate(search):
        steps.call("tste.authors_search", settings, {**job, "npz": npz, "index": str(k)})
    parts = [str(tmp_path / f"{part}.csv") for part in ("nn", "fold0", "fold1")]
    for csv in parts:
        arguments = {**job, "search_files": search, "csv": csv, "part": Path(csv).stem}
        steps.call("tste.authors_part", settings, arguments)
    merged = {key: job[key] for key in ("reading", "dataset", "method")}
    steps.call("tste.merge", {}, {**merged, "parts": parts, "csv": str(tmp_path / "m.csv")})
    jobs = pd.read_csv(tmp_path / "m.csv").drop(columns="seconds")
    one = authors.evaluate_authors(
        planted_self, "GNMDS-K", [2, 3], 2, {"mu": [0.5, 0.9]}, seed=0, max_iter=40
    ).drop(columns="seconds")
    pd.testing.assert_frame_equal(jobs, one, check_dtype=False)
    assert (jobs.loc[jobs["fold"] == -1, "n_iter"] == -1).all()  # read off the search's kernel
    with pytest.raises(ValueError, match="the parts hold rows of"):
        steps.call("tste.merge", {}, {**merged, "method": "STE-K", "parts": parts,
                                      "csv": str(tmp_path / "x.csv")})  # fmt: skip


def _write(df, path):
    df.to_csv(path, index=False)
    return path


def test_authors_map_is_rescaled_to_the_unit_square(planted_self, tmp_path):
    maps.embed_map(
        planted_self, "CKL-X", tmp_path / "m.npz", seed=0, max_iter=50, params={"mu": 0.05},
        protocol="authors_code",
    )  # fmt: skip
    Y, _, meta = maps.load_map(tmp_path / "m.npz")
    np.testing.assert_allclose(Y.min(axis=0), 0.0)
    np.testing.assert_allclose(Y.max(axis=0), 1.0)
    assert meta["protocol"] == "authors_code"
    with pytest.raises(ValueError, match="protocol"):
        maps.embed_map(
            planted_self, "CKL-X", tmp_path / "x.npz", seed=0, max_iter=5, protocol="paper"
        )


def test_kform_solver_settings_reach_the_k_forms_only(planted):
    """The accelerated solver stops when converged (fewer iterations than the plain rule's
    budget) and fits as well; X forms ignore the K-form settings."""
    fast = KFormSolver(solver="accelerated", precision="float32", tol=1e-7)
    common = dict(seed=0, max_iter=400, folds_used=1)
    plain = paper_text.evaluate_method(planted, "STE-K", [2], 2, {"lam": [0.1]}, **common)
    accel = paper_text.evaluate_method(
        planted, "STE-K", [2], 2, {"lam": [0.1]}, kform_solver=fast, **common
    )
    assert (accel["n_iter"] < plain["n_iter"]).all()
    gap = accel["generalisation_error"] - plain["generalisation_error"]
    assert (gap.abs() < 0.05).all()
    x_plain = paper_text.evaluate_method(planted, "STE-X", [2], 2, **common)
    x_fast = paper_text.evaluate_method(planted, "STE-X", [2], 2, kform_solver=fast, **common)
    pd.testing.assert_frame_equal(x_plain.drop(columns="seconds"), x_fast.drop(columns="seconds"))
    with pytest.raises(ValueError, match="solver"):
        paper_text.evaluate_method(
            planted, "STE-K", [2], 2, kform_solver=KFormSolver("newton", "float32", 1e-7), **common
        )


def test_authors_figure_settings_reach_the_fits_and_change_only_those(planted_self, tmp_path):
    """The authors_figure reading's options reach the estimator (t-STE-X alpha = 1 and the sum
    of probabilities at 3-D, where the scripts' call has alpha = 2 and sum log p); with no
    settings the rows are the authors_code ones. A part job takes them as
    its settings' solver options (SolverOptions, checked when the settings are made)."""
    fig = {"alpha": 1, "use_log": False}
    code = authors.evaluate_authors(planted_self, "t-STE-X", [3], 2, seed=0, max_iter=60)
    same = authors.evaluate_authors(
        planted_self, "t-STE-X", [3], 2, seed=0, max_iter=60, settings={}
    )
    pd.testing.assert_frame_equal(code.drop(columns="seconds"), same.drop(columns="seconds"))
    figure = authors.evaluate_authors(
        planted_self, "t-STE-X", [3], 2, seed=0, max_iter=60, settings=fig
    )
    assert not np.allclose(figure["generalisation_error"].fillna(-1),
                           code["generalisation_error"].fillna(-1))  # fmt: skip
    trip, n, labels, allow_self = protocol.load_triplets(planted_self, with_self=True)
    train = trip[: authors.search_split(len(trip), 2)]
    fits, _ = authors.authors_fit("t-STE-X", [3], train, n, None, 0, 60, allow_self, fig)
    from embedlab.methods.triplets import TSTE

    est = TSTE(n_components=3, alpha=1, use_log=False, learning_rate=2.0, max_iter=60,
               random_state=0).fit(train, n=n, allow_self=True)  # fmt: skip
    np.testing.assert_array_equal(fits[3][0], est.embedding_)
    settings = _authors_settings(dims=[3], max_iter=60, solver=fig)
    job = {**_job(planted_self, "tste_authors_figure", "t-STE-X"), "search_files": [],
           "csv": str(tmp_path / "nn.csv"), "part": "nn"}  # fmt: skip
    steps.call("tste.authors_part", settings, job)
    written = pd.read_csv(tmp_path / "nn.csv").drop(columns="seconds")
    want = figure[figure["fold"] == -1].drop(columns="seconds").reset_index(drop=True)
    pd.testing.assert_frame_equal(written, want, check_dtype=False)
    with pytest.raises(ValueError, match=r"no option \['alfa'\]"):
        steps.call("tste.authors_part", {**settings, "solver": {"alfa": 1}}, job)
    with pytest.raises(
        ValueError, match=r"CKL-X: the released code has no option \['alpha', 'use_log'\]"
    ):
        steps.call("tste.authors_part", settings, {**job, "method": "CKL-X"})
    maps.embed_map(
        planted_self, "t-STE-X", tmp_path / "f.npz", seed=0, max_iter=50,
        protocol="authors_figure", settings=fig,
    )  # fmt: skip
    assert maps.load_map(tmp_path / "f.npz")[2]["protocol"] == "authors_figure"
    from embedlab.plots import tste as plots

    maps.embed_map(
        planted_self, "CKL-X", tmp_path / "c.npz", seed=0, max_iter=20, params={"mu": 0.05},
        protocol="authors_code",
    )  # fmt: skip
    drawn = plots.fig3([maps.load_map(tmp_path / name) for name in ("c.npz", "f.npz")])
    assert "protocol authors_figure (t-STE-X with the figure" in drawn._suptitle.get_text()
    with pytest.raises(ValueError, match="authors' readings"):
        maps.embed_map(
            planted_self, "t-STE-X", tmp_path / "g.npz", seed=0, max_iter=5,
            protocol="paper_text", settings=fig,
        )  # fmt: skip


def test_authors_k_forms_run_as_released(planted_self):
    """The authors' K forms use the released gradient and projection (kform='released'):
    the fit differs from the symmetric projected gradient of the same objective."""
    trip, n, _, allow_self = protocol.load_triplets(planted_self, with_self=True)
    fits, K = authors.authors_fit("STE-K", [2], trip[:300], n, {"lam": 0.1}, 0, 30, allow_self)
    from embedlab.methods.triplets import STE

    params = {**authors.authors_params("STE-K", {"lam": 0.1}), "kform": "symmetric"}
    sym = STE(form="K", n_components=2, max_iter=30, random_state=0, **params)
    sym.fit(trip[:300], n=n, allow_self=True)
    assert not np.allclose(K, sym.kernel_, atol=1e-8)
    np.testing.assert_allclose(K, K.T, atol=1e-10)


def test_summary_has_a_row_set_per_reading(tmp_path):
    """summary.summary_table reads the claims of all three readings; the authors_figure rows
    carry their own table label and verdicts from its claims table."""
    from embedlab import summary

    paper = REPO / "config/paper_values/tste_claims.csv"
    claims = pd.read_csv(paper)
    ours = pd.DataFrame({
        "dataset": claims["dataset"], "claim": claims["note"],
        "ours": ["t-STE-X 0.333, GNMDS-X 0.348", "t-STE-X 0.664", "GNMDS-X 0.917",
                 "t-STE-X lowest at 1/1 dims"],
        "holds": ["False", "True", "True", "True"], "degenerate": ["", "", "", ""],
    })  # fmt: skip
    ours.to_csv(tmp_path / "tste_authors_figure_claims.csv", index=False)
    df = summary.summary_table([paper], tmp_path)
    tables = set(df["table"])
    assert {"Fig. 2", "Fig. 2 (authors' code)"} <= tables
    fig = df[df["table"] == "Fig. 2 (authors' code, sum of p, t-STE alpha 1)"]
    assert len(fig) == len(claims)
    assert list(fig["verdict"]) == ["does not hold", "holds", "holds", "holds"]  # 0.333 < 0.34
    other = df[df["table"] == "Fig. 2"]
    assert other["note"].str.contains("not in this run").all()
