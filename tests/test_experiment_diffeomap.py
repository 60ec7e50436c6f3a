"""Diffeomap paper glue: classes, the grid / full-set / final protocol, table and figures on
tiny inputs."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import yaml

from embedlab import artifacts, cli, runs
from embedlab.experiments import diffeomap as exp

SETTINGS = {"p": 3, "n_basis": 20, "max_iter": 8}
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def blobs(tmp_path):
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(3, 5))
    labels = np.repeat(np.arange(3), 12)
    X = centres[labels] + rng.normal(size=(36, 5))
    art = artifacts.Artifact(
        kind="vectors",
        arrays={"X": X, "labels": labels},
        items=pd.DataFrame({"name": [f"p{i}" for i in range(36)]}),
        meta={},
    )
    folder = tmp_path / "blobs"
    artifacts.save(art, folder, "blobs")
    return folder


def test_author_classes_keeps_papers_with_exactly_one_top_author():
    # authors 0 (3 papers) and 1 (2 papers) are the top 2; paper 3 has both, paper 4 none
    A = sp.csr_matrix(np.array([[1, 0, 0], [1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]]))
    labels, top = exp.author_classes(A, 2)
    assert top.tolist() == [0, 1]
    assert labels.tolist() == [0, 0, 1, -1, -1]


def test_class_errors_ignores_unlabelled_points():
    Y = np.array([[0.0], [0.1], [5.0], [5.1], [0.05]])
    assert exp.class_errors(Y, np.array([0, 0, 1, 1, -1])) == (0, 4)
    assert exp.class_errors(Y, np.array([0, 1, 1, 1, 0]))[0] == 1  # point 1: nearest is 4


def test_protocol_table_headline_and_figure(blobs, tmp_path):
    grid = {"sigma_rel": [0.3, 0.6], "lam": [10.0]}
    g = exp.embed(blobs, tmp_path / "g.npz", grid, SETTINGS, stage="grid")
    table = exp.load(g)["runs"]
    assert len(table) == 2 and all(not r["error"] for r in table)
    chosen = exp.select(g)
    best = min(table, key=lambda r: r["errors_flow"])
    assert chosen == {"sigma_rel": [best["sigma_rel"]], "lam": [best["lam"]]}
    f = exp.embed(blobs, tmp_path / "f.npz", chosen, SETTINGS, stage="final")
    b = exp.baselines(blobs, tmp_path / "b.npz", ["pca", "isomap"], n_neighbors=5)
    full = exp.embed(blobs, tmp_path / "full.npz", chosen, {**SETTINGS, "n_basis": None},
                     stage="full_set")  # fmt: skip
    n_used = exp.load(full)["runs"][0]["n_basis"]
    assert n_used == len(exp.load(full)["arrays"]["rows"])  # every point (no repeats here)
    paper = tmp_path / "paper.csv"
    pd.DataFrame({"dataset": ["blobs"] * 2, "method": ["diffeomap", "pca"],
                  "metric": ["loo_1nn_errors"] * 2, "value": [3, 20], "note": ["", ""]},
                 ).to_csv(paper, index=False)  # fmt: skip
    df = exp.results_table([g, f, full, b], paper)
    assert set(df["stage"]) == {"grid", "final", "full_set", "baseline"}
    ours = df["stage"].tolist()
    assert ours == sorted(ours, key=exp.STAGE_ORDER.get)  # the headline (full set) first
    assert ours[0] == "full_set"
    # the headline and the paper's approximation are compared with the paper, grid rows not
    full_row = df[df["stage"] == "full_set"].iloc[0]
    assert full_row["label"].startswith("exact flow") and full_row["paper"] == 3
    assert full_row["verdict"] in {"matched", "better", "worse"}
    final_row = df[df["stage"] == "final"].iloc[0]
    assert final_row["label"] == "paper's approximation (reduced set, n = 20)"
    assert final_row["paper"] == 3 and final_row["verdict"] != ""
    grid_rows = df[df["stage"] == "grid"]
    assert (grid_rows["label"] == "").all() and grid_rows["paper"].isna().all()
    assert (grid_rows["verdict"] == "").all()
    # the reported errors are those of the stored flows (the maps)
    for stage, path in (("final", f), ("full_set", full)):
        data = exp.load(path)
        errors = exp.class_errors(data["arrays"]["flow_0"], data["arrays"]["classes"])[0]
        assert df.loc[df["stage"] == stage, "value"].item() == errors
    exp.figure("fig3", tmp_path / "fig3", full, blobs, b)
    assert (tmp_path / "fig3.png").stat().st_size > 0


def test_full_basis_flow_reproduces_end_points(blobs, tmp_path):
    """Charged: with every point in the basis and eps -> 0 the integrated flow equals Phi_p; at
    eps = 1 the field leaves eps (K + eps)^-1 V of each step's velocity out, so the two differ.
    Span (the default): the map is the flow, with a reduced set too."""
    gaps = {}
    for eps in (1e-8, 1.0):
        settings = {**SETTINGS, "n_basis": 36, "eps": eps, "formulation": "charged"}
        out = exp.embed(blobs, tmp_path / f"full{eps}.npz", {"sigma_rel": [0.5], "lam": [10.0]},
                        settings, stage="grid")  # fmt: skip
        row = exp.load(out)["runs"][0]
        gaps[eps] = row["flow_gap_rms"]
        assert row["energy"] < row["off_subspace"] * 10.0 + row["kinetic"] + 1e-9
    assert gaps[1e-8] < 1e-5 and gaps[1.0] > 1e-3
    out = exp.embed(blobs, tmp_path / "span.npz", {"sigma_rel": [0.5], "lam": [10.0]},
                    {**SETTINGS, "n_basis": 12}, stage="grid")  # fmt: skip
    row = exp.load(out)["runs"][0]
    assert row["flow_gap_rms"] < 1e-10 and row["errors_phi"] == row["errors_flow"]


def test_single_unlabelled_point_is_selected_and_grids_need_labels(blobs, tmp_path):
    with pytest.raises(ValueError, match="no class labels"):
        exp.embed(
            blobs,
            tmp_path / "x.npz",
            {"sigma_rel": [0.3, 0.6], "lam": [1.0]},
            SETTINGS,
            stage="grid",
            use_labels=False,
        )
    g = exp.embed(
        blobs,
        tmp_path / "one.npz",
        {"sigma_rel": [0.4], "lam": [1.0]},
        SETTINGS,
        stage="grid",
        use_labels=False,
    )
    assert exp.select(g) == {"sigma_rel": [0.4], "lam": [1.0]}


def without_seconds(info: dict) -> dict:
    return {**info, "runs": [{k: v for k, v in r.items() if k != "seconds"} for r in info["runs"]]}


def test_full_set_points_as_jobs_gather_into_the_whole_grids_file(blobs, tmp_path):
    """The workflow's full-set split (diffeomap-embed --point per grid point, then
    diffeomap-gather) gives the file of one diffeomap-embed of the whole grid: every array bit
    for bit, the same meta and runs table but for each run's seconds (the fit's wall time)."""
    grid = {"sigma_rel": [0.3, 0.6], "lam": [1.0, 10.0]}
    argv = ["diffeomap-embed", "--artifact", str(blobs), "--seed", "0", "--author-match",
            "exactly_one", "--grid", json.dumps(grid), "--stage", "full_set", "--p", "3",
            "--n-basis", "all", "--max-iter", "8", "--eps", "1.0", "--optimizer", "lbfgs",
            "--formulation", "span"]  # fmt: skip
    whole = tmp_path / "whole.npz"
    assert cli.main([*argv, "--out", str(whole)]) == 0
    points = [tmp_path / f"point{k}.npz" for k in (2, 0, 3, 1)]  # any order
    for path in points:
        assert cli.main([*argv, "--out", str(path), "--point", path.stem[-1]]) == 0
    gathered = tmp_path / "gathered.npz"
    assert cli.main(["diffeomap-gather", "--out", str(gathered), *map(str, points)]) == 0
    (a, a_info), (b, b_info) = runs.load_npz(whole), runs.load_npz(gathered)
    assert list(a) == list(b) and {"flow_3", "phi_3", "rows", "classes"} <= set(a)
    for name in a:
        assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape
        assert a[name].tobytes() == b[name].tobytes(), name
    assert len(a_info["runs"]) == 4 and not any(r["error"] for r in a_info["runs"])
    assert without_seconds(a_info) == without_seconds(b_info)
    assert exp.best_index(a_info["runs"]) == exp.best_index(b_info["runs"])
    # a point missing, a file of the whole grid, a point of another grid: no gathered file
    with pytest.raises(ValueError, match="need each of 0 to 3 once"):
        exp.gather(points[:3], tmp_path / "x.npz")
    with pytest.raises(ValueError, match="not a point file"):
        exp.gather([whole, *points], tmp_path / "x.npz")
    other = exp.embed(blobs, tmp_path / "other.npz", {**grid, "lam": [1.0, 100.0]},
                      {**SETTINGS, "n_basis": None}, stage="full_set", point=3)  # fmt: skip
    with pytest.raises(ValueError, match="another grid"):
        exp.gather([*points[:2], points[3], other], tmp_path / "x.npz")
    with pytest.raises(ValueError, match="point 4 of a grid of 4: 0 to 3"):
        exp.embed(blobs, tmp_path / "x.npz", grid, SETTINGS, stage="full_set", point=4)
    assert not (tmp_path / "x.npz").exists()


def test_centre_on_body_removes_each_frames_translation_and_keeps_the_pose():
    rng = np.random.default_rng(0)
    pose = rng.normal(size=(4, 3))  # 4 markers
    shifts = np.array([[0.0, 0.0, 0.0], [5.0, 1.0, -2.0], [100.0, 0.0, 3.0]])
    X = np.stack([(pose + s).ravel() for s in shifts])  # the same pose, translated
    centred = exp.centre_on_body(X)
    np.testing.assert_allclose(centred.reshape(3, 4, 3).mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(centred[0], centred[2], atol=1e-12)
    np.testing.assert_allclose(centred[0], (pose - pose.mean(axis=0)).ravel(), atol=1e-12)
    with pytest.raises(ValueError, match="triples"):
        exp.centre_on_body(np.zeros((3, 4)))


def test_shared_class_errors_counts_a_hit_when_any_class_is_shared():
    Y = np.array([[0.0], [0.1], [5.0], [5.1], [9.0]])
    S = np.array([[1, 0], [1, 1], [0, 1], [1, 0], [0, 0]])  # point 4 has no class
    # 0 <-> 1 share class 0; 2's nearest is 3 (no shared class); 3's nearest is 2
    assert exp.shared_class_errors(Y, S) == (2, 4)
    assert exp.class_errors(Y, S) == (2, 4)
    # with one class per row it is the ordinary 1-NN error count
    labels = np.array([0, 0, 1, 1, 0])
    assert exp.shared_class_errors(Y, np.eye(2, dtype=int)[labels]) == (
        exp.class_errors(Y, labels)[0],
        5,
    )


def test_author_match_any_gives_every_top_author_of_a_paper(tmp_path):
    A = sp.csr_matrix(np.array([[1, 0, 0], [1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]]))
    art = artifacts.Artifact(
        kind="vectors",
        arrays={"X": np.random.default_rng(0).normal(size=(5, 4)), "paper_authors": A},
        items=pd.DataFrame({"name": [f"p{i}" for i in range(5)]}),
        meta={},
    )
    artifacts.save(art, tmp_path / "papers", "papers")
    _, one, _ = exp.prepare(tmp_path / "papers", top_authors=2)
    _, every, info = exp.prepare(tmp_path / "papers", top_authors=2, author_match="any")
    assert one.tolist() == [0, 0, 1, -1, -1]
    assert every.tolist() == [[1, 0], [1, 0], [0, 1], [1, 1], [0, 0]]
    assert info["author_match"] == "any"
    with pytest.raises(ValueError, match="author_match='some'"):
        exp.prepare(tmp_path / "papers", top_authors=2, author_match="some")


def test_quick_config_vowel_headline_has_at_most_0_6_of_pcas_errors(build_from_mirror, tmp_path):
    """The quick run's vowel headline (the full-set flow at its full_set grid's best point, the
    row the summary compares with the paper's 140) has at most 0.6x PCA's LOO 1-NN errors in
    2-D on the same subsample."""
    quick = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())["diffeomap"]
    vowel = quick["datasets"]["vowel"]
    full_set = quick["full_set"]
    artifacts.save(build_from_mirror("vowel"), tmp_path / "vowel", "vowel")
    data = {"subsample": vowel["subsample"], "seed": quick["seed"]}
    settings = {"p": full_set["p"], "max_iter": full_set["max_iter"], "n_basis": None}
    full = exp.embed(tmp_path / "vowel", tmp_path / "full.npz", full_set["grids"]["vowel"],
                     settings, stage="full_set", **data)  # fmt: skip
    b = exp.baselines(tmp_path / "vowel", tmp_path / "b.npz", ["pca"], **data)
    pca = exp.load(b)["runs"][0]["errors"]
    runs = exp.load(full)["runs"]
    headline = runs[exp.best_index(runs)]
    assert pca > 150  # of 300: PCA mixes the vowels
    assert headline["n_basis"] == vowel["subsample"]  # every point a basis function
    assert headline["errors_flow"] == headline["errors_phi"]  # the map is the flow
    assert headline["errors_flow"] <= 0.6 * pca


def test_summary_compares_the_full_set_headline_and_notes_the_approximation(tmp_path):
    from embedlab import summary

    paper = tmp_path / "paper.csv"
    pd.DataFrame({"dataset": ["vowel", "vowel"], "method": ["diffeomap", "isomap"],
                  "metric": ["loo_1nn_errors"] * 2, "value": [140, 458], "note": ["", ""]},
                 ).to_csv(paper, index=False)  # fmt: skip
    ours = tmp_path / "ours.csv"
    common = {"dataset": "vowel", "metric": "loo_1nn_errors", "params": "{}"}
    pd.DataFrame([
        {**common, "method": "diffeomap", "stage": "full_set", "value": 126,
         "label": exp.COMPARED["full_set"], "verdict": "better"},
        {**common, "method": "diffeomap", "stage": "final", "value": 300,
         "label": "paper's approximation (reduced set, n = 300)", "verdict": "worse"},
        {**common, "method": "diffeomap", "stage": "grid", "value": 90, "label": None,
         "verdict": None},
        {**common, "method": "isomap", "stage": "baseline", "value": 470, "label": "baseline",
         "verdict": "matched"},
    ]).to_csv(ours, index=False)  # fmt: skip
    rows = summary.diffeomap_rows(paper, ours)
    assert [r["ours"] for r in rows] == [126, 470]  # the headline, not the grid's 90 or final
    assert rows[0]["verdict"] == "better" and rows[0]["note"].startswith("exact flow")
    assert "paper's approximation (reduced set, n = 300): 300 (worse)" in rows[0]["note"]
