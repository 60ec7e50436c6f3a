"""Diffeomap paper glue: classes, the grid / full-set / final protocol through the workflow's
steps, table and figures on tiny inputs."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import yaml

from embedlab import artifacts, runs
from embedlab.experiments.diffeomap import data, fits, scoring
from embedlab.experiments.diffeomap.gather import gather
from embedlab.experiments.diffeomap.settings import Preparation
from embedlab.experiments.diffeomap.table import COMPARED, STAGE_ORDER
from embedlab.settings import SettingsError
from embedlab.steps import call

from .helpers import save_labelled_vectors

REPO = Path(__file__).resolve().parents[1]
#: a cheap stage (p, n_basis, max_iter)
STAGE = {"p": 3, "n_basis": 20, "max_iter": 8}
#: a dataset prepared as it is: no subset, PCA or author classes
AS_IS = {
    "subsample": None,
    "pca_dims": None,
    "top_authors": None,
    "author_match": "exactly_one",
    "use_labels": True,
    "centre_frames": False,
}


def fit_settings(grid=None, preparation=None, **stage) -> dict:
    """The settings of step diffeomap.fit: the schema's defaults, STAGE updated by ``stage``."""
    return {
        "seed": 0,
        "eps": 1.0,
        "optimizer": "lbfgs",
        "formulation": "span",
        **STAGE,
        **stage,
        "grid": grid,
        "preparation": {**AS_IS, **(preparation or {})},
    }


def files(folder: Path) -> list[str]:
    """A rule's input of an artifact (its three files)."""
    return [str(folder / name) for name in ("data.npz", "items.tsv", "meta.json")]


def fit(folder: Path, out: Path, stage: str, settings: dict, **inputs) -> Path:
    """Run step diffeomap.fit as its rule does, on dataset ``folder.name``."""
    arguments = {"data": files(folder), "npz": str(out), "dataset": folder.name, "stage": stage}
    call("diffeomap.fit", settings, {**arguments, **inputs})
    return out


@pytest.fixture
def blobs(tmp_path):
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(3, 5))
    labels = np.repeat(np.arange(3), 12)
    X = centres[labels] + rng.normal(size=(36, 5))
    return save_labelled_vectors(tmp_path / "blobs", X, labels)


def test_author_classes_keeps_papers_with_exactly_one_top_author():
    # authors 0 (3 papers) and 1 (2 papers) are the top 2; paper 3 has both, paper 4 none
    A = sp.csr_matrix(np.array([[1, 0, 0], [1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]]))
    labels, top = data.author_classes(A, 2)
    assert top.tolist() == [0, 1]
    assert labels.tolist() == [0, 0, 1, -1, -1]


def test_class_errors_ignores_unlabelled_points():
    Y = np.array([[0.0], [0.1], [5.0], [5.1], [0.05]])
    assert scoring.class_errors(Y, np.array([0, 0, 1, 1, -1])) == (0, 4)
    assert scoring.class_errors(Y, np.array([0, 1, 1, 1, 0]))[0] == 1  # point 1: nearest is 4


def test_protocol_table_headline_and_figure(blobs, tmp_path):
    grid = {"sigma_rel": [0.3, 0.6], "lam": [10.0]}
    g = fit(blobs, tmp_path / "grid.npz", "grid", fit_settings(grid))
    table = fits.load(g)["runs"]
    assert len(table) == 2 and all(not r["error"] for r in table)
    chosen = fits.select(g)
    best = min(table, key=lambda r: r["errors_flow"])
    assert chosen == {"sigma_rel": [best["sigma_rel"]], "lam": [best["lam"]]}
    f = fit(blobs, tmp_path / "final.npz", "final", fit_settings(), select_from=str(g))
    assert fits.load(f)["meta"]["grid"] == chosen
    b = tmp_path / "baselines.npz"
    call(
        "diffeomap.baselines",
        {"seed": 0, "baselines": ["pca", "isomap"], "isomap_neighbors": 5, "preparation": AS_IS},
        {"data": files(blobs), "npz": str(b), "dataset": "blobs"},
    )
    full = fit(blobs, tmp_path / "full.npz", "full_set", fit_settings(chosen, n_basis=None))
    n_used = fits.load(full)["runs"][0]["n_basis"]
    assert n_used == len(fits.load(full)["arrays"]["rows"])  # every point (no repeats here)
    paper = tmp_path / "paper.csv"
    pd.DataFrame({"dataset": ["blobs"] * 2, "method": ["diffeomap", "pca"],
                  "metric": ["loo_1nn_errors"] * 2, "value": [3, 20], "note": ["", ""]},
                 ).to_csv(paper, index=False)  # fmt: skip
    csv, md = tmp_path / "t.csv", tmp_path / "t.md"
    call(
        "diffeomap.table",
        {"left_out": {}},
        {"results": [str(g), str(f), str(full), str(b)], "paper": str(paper), "csv": csv, "md": md},
    )
    df = pd.read_csv(csv)
    assert set(df["stage"]) == {"grid", "final", "full_set", "baseline"}
    ours = df["stage"].tolist()
    assert ours == sorted(ours, key=STAGE_ORDER.get)  # the headline (full set) first
    assert ours[0] == "full_set"
    # the headline and the paper's approximation are compared with the paper, grid rows not
    full_row = df[df["stage"] == "full_set"].iloc[0]
    assert full_row["label"].startswith("exact flow") and full_row["paper"] == 3
    assert full_row["verdict"] in {"matched", "better", "worse"}
    final_row = df[df["stage"] == "final"].iloc[0]
    assert final_row["label"] == "paper's approximation (reduced set, n = 20)"
    assert final_row["paper"] == 3 and not pd.isna(final_row["verdict"])
    grid_rows = df[df["stage"] == "grid"]
    assert grid_rows["label"].isna().all() and grid_rows["paper"].isna().all()
    assert grid_rows["verdict"].isna().all()
    # the reported errors are those of the stored flows (the maps)
    for stage, path in (("final", f), ("full_set", full)):
        arrays = fits.load(path)["arrays"]
        errors = scoring.class_errors(arrays["flow_0"], arrays["classes"])[0]
        assert df.loc[df["stage"] == stage, "value"].item() == errors
    png, pdf = tmp_path / "fig3.png", tmp_path / "fig3.pdf"
    call(
        "diffeomap.figure",
        {},
        {"fits": str(full), "baseline_file": str(b), "data": files(blobs), "png": str(png),
         "pdf": str(pdf), "fig": "fig3"},
    )  # fmt: skip
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0


def test_a_fit_takes_a_grid_or_a_file_to_select_from(blobs, tmp_path):
    one = {"sigma_rel": [0.4], "lam": [1.0]}
    g = fit(blobs, tmp_path / "grid.npz", "grid", fit_settings(one))
    with pytest.raises(ValueError, match="one of the two"):
        fit(blobs, tmp_path / "x.npz", "final", fit_settings(one), select_from=str(g))
    with pytest.raises(ValueError, match="one of the two"):
        fit(blobs, tmp_path / "x.npz", "final", fit_settings())
    with pytest.raises(SettingsError, match="preparation.*missing centre_frames"):
        bad = fit_settings(one)
        bad["preparation"] = {k: v for k, v in AS_IS.items() if k != "centre_frames"}
        fit(blobs, tmp_path / "x.npz", "grid", bad)
    assert not (tmp_path / "x.npz").exists()


def test_full_basis_flow_reproduces_end_points(blobs, tmp_path):
    """Charged: with every point in the basis and eps -> 0 the integrated flow equals Phi_p; at
    eps = 1 the field leaves eps (K + eps)^-1 V of each step's velocity out, so the two differ.
    Span (the default): the map is the flow, with a reduced set too."""
    one = {"sigma_rel": [0.5], "lam": [10.0]}
    gaps = {}
    for eps in (1e-8, 1.0):
        settings = fit_settings(one, n_basis=36, eps=eps, formulation="charged")
        out = fit(blobs, tmp_path / f"full{eps}.npz", "grid", settings)
        row = fits.load(out)["runs"][0]
        gaps[eps] = row["flow_gap_rms"]
        assert row["energy"] < row["off_subspace"] * 10.0 + row["kinetic"] + 1e-9
    assert gaps[1e-8] < 1e-5 and gaps[1.0] > 1e-3
    out = fit(blobs, tmp_path / "span.npz", "grid", fit_settings(one, n_basis=12))
    row = fits.load(out)["runs"][0]
    assert row["flow_gap_rms"] < 1e-10 and row["errors_phi"] == row["errors_flow"]


def test_single_unlabelled_point_is_selected_and_grids_need_labels(blobs, tmp_path):
    unlabelled = {"use_labels": False}
    two = {"sigma_rel": [0.3, 0.6], "lam": [1.0]}
    with pytest.raises(ValueError, match="no class labels"):
        fit(blobs, tmp_path / "x.npz", "grid", fit_settings(two, unlabelled))
    one = {"sigma_rel": [0.4], "lam": [1.0]}
    g = fit(blobs, tmp_path / "one.npz", "grid", fit_settings(one, unlabelled))
    assert fits.select(g) == one


def without_seconds(info: dict) -> dict:
    return {**info, "runs": [{k: v for k, v in r.items() if k != "seconds"} for r in info["runs"]]}


def test_full_set_points_as_jobs_gather_into_the_whole_grids_file(blobs, tmp_path):
    """The workflow's full-set split (diffeomap_full_set_point: a fit per grid point, then
    diffeomap_full_set: the gather step) gives the file of one fit of the whole grid: every
    array bit for bit, the same meta and runs table but for each run's seconds (the fit's wall
    time)."""
    grid = {"sigma_rel": [0.3, 0.6], "lam": [1.0, 10.0]}
    settings = fit_settings(grid, n_basis=None)
    whole = fit(blobs, tmp_path / "whole.npz", "full_set", settings)
    points = [tmp_path / f"point{k}.npz" for k in (2, 0, 3, 1)]  # any order
    for path in points:
        fit(blobs, path, "full_set", settings, point=path.stem[-1])  # a wildcard: a string
    gathered = tmp_path / "gathered.npz"
    arguments = {"points": list(map(str, points)), "npz": str(gathered), "dataset": "blobs"}
    with pytest.raises(ValueError, match="a fit of 'blobs', not 'vowel'"):
        call("diffeomap.gather", {}, {**arguments, "dataset": "vowel"})
    call("diffeomap.gather", {}, arguments)
    (a, a_info), (b, b_info) = runs.load_npz(whole), runs.load_npz(gathered)
    assert list(a) == list(b) and {"flow_3", "phi_3", "rows", "classes"} <= set(a)
    for name in a:
        assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape
        assert a[name].tobytes() == b[name].tobytes(), name
    assert len(a_info["runs"]) == 4 and not any(r["error"] for r in a_info["runs"])
    assert without_seconds(a_info) == without_seconds(b_info)
    assert fits.best_index(a_info["runs"]) == fits.best_index(b_info["runs"])
    # a point missing, a file of the whole grid, a point of another grid: no gathered file
    with pytest.raises(ValueError, match="need each of 0 to 3 once"):
        gather(points[:3])
    with pytest.raises(ValueError, match="not a point file"):
        gather([whole, *points])
    other = fit_settings({**grid, "lam": [1.0, 100.0]}, n_basis=None)
    other_point = fit(blobs, tmp_path / "other.npz", "full_set", other, point="3")
    with pytest.raises(ValueError, match="another grid"):
        gather([*points[:2], points[3], other_point])
    with pytest.raises(ValueError, match="point 4 of a grid of 4: 0 to 3"):
        fit(blobs, tmp_path / "x.npz", "full_set", settings, point="4")
    assert not (tmp_path / "x.npz").exists()


def test_centre_on_body_removes_each_frames_translation_and_keeps_the_pose():
    rng = np.random.default_rng(0)
    pose = rng.normal(size=(4, 3))  # 4 markers
    shifts = np.array([[0.0, 0.0, 0.0], [5.0, 1.0, -2.0], [100.0, 0.0, 3.0]])
    X = np.stack([(pose + s).ravel() for s in shifts])  # the same pose, translated
    centred = data.centre_on_body(X)
    np.testing.assert_allclose(centred.reshape(3, 4, 3).mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(centred[0], centred[2], atol=1e-12)
    np.testing.assert_allclose(centred[0], (pose - pose.mean(axis=0)).ravel(), atol=1e-12)
    with pytest.raises(ValueError, match="triples"):
        data.centre_on_body(np.zeros((3, 4)))


def test_shared_class_errors_counts_a_hit_when_any_class_is_shared():
    Y = np.array([[0.0], [0.1], [5.0], [5.1], [9.0]])
    S = np.array([[1, 0], [1, 1], [0, 1], [1, 0], [0, 0]])  # point 4 has no class
    # 0 <-> 1 share class 0; 2's nearest is 3 (no shared class); 3's nearest is 2
    assert scoring.shared_class_errors(Y, S) == (2, 4)
    assert scoring.class_errors(Y, S) == (2, 4)
    # with one class per row it is the ordinary 1-NN error count
    labels = np.array([0, 0, 1, 1, 0])
    assert scoring.shared_class_errors(Y, np.eye(2, dtype=int)[labels]) == (
        scoring.class_errors(Y, labels)[0],
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

    def classes(author_match):
        return data.prepare(
            tmp_path / "papers",
            Preparation(**{**AS_IS, "top_authors": 2, "author_match": author_match}),
            seed=0,
        )

    _, one, _ = classes("exactly_one")
    _, every, info = classes("any")
    assert one.tolist() == [0, 0, 1, -1, -1]
    assert every.tolist() == [[1, 0], [1, 0], [0, 1], [1, 1], [0, 0]]
    assert info["author_match"] == "any"
    with pytest.raises(ValueError, match="author_match='some'"):
        classes("some")


def test_the_workflow_hands_a_fit_every_field_of_the_preparation():
    """diffeomap_helpers.smk names the dataset entry's keys that prepare the data: the fields
    of Preparation, in the same order."""
    text = (REPO / "workflow" / "rules" / "diffeomap_helpers.smk").read_text()
    keys = re.search(r"DIFFEOMAP_PREPARATION = \(([^)]*)\)", text)[1]
    assert re.findall(r'"(\w+)"', keys) == list(Preparation.field_names())


def test_quick_config_vowel_headline_has_at_most_0_6_of_pcas_errors(build_from_mirror, tmp_path):
    """The quick run's vowel headline (the full-set flow at its full_set grid's best point, the
    row the summary compares with the paper's 140) has at most 0.6x PCA's LOO 1-NN errors in
    2-D on the same subsample."""
    quick = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())["diffeomap"]
    vowel = quick["datasets"]["vowel"]
    full_set = quick["full_set"]
    folder = tmp_path / "vowel"
    artifacts.save(build_from_mirror("vowel"), folder, "vowel")
    subset = {"subsample": vowel["subsample"]}
    settings = fit_settings(
        full_set["grids"]["vowel"],
        subset,
        p=full_set["p"],
        max_iter=full_set["max_iter"],
        n_basis=None,
        seed=quick["seed"],
    )
    full = fits.load(fit(folder, tmp_path / "full.npz", "full_set", settings))["runs"]
    b = tmp_path / "baselines.npz"
    call(
        "diffeomap.baselines",
        {"seed": quick["seed"], "baselines": ["pca"], "isomap_neighbors": 10,
         "preparation": {**AS_IS, **subset}},
        {"data": files(folder), "npz": str(b), "dataset": "vowel"},
    )  # fmt: skip
    pca = fits.load(b)["runs"][0]["errors"]
    headline = full[fits.best_index(full)]
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
         "label": COMPARED["full_set"], "verdict": "better"},
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
