"""SNEST Table 1: cells, the steps' runs files, the KL table beside the paper, figures; the
per-dataset grids the workflow hands each job."""

import re
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from embedlab import artifacts, runs, steps
from embedlab.datasets.school import build as build_school
from embedlab.experiments.snest import cells, table1

from .conftest import REPO
from .helpers import planned_jobs

FULL_BUDGET = {"rate_window": 0, "plateau_tol": 0.0, "abandon_margin": float("inf")}


def embed_settings(**changes) -> dict:
    """snest.embed's settings: a short full-budget run of one learning rate."""
    base = dict(
        grid={"learning_rate": [10.0]}, restarts=2, restarts_per_job=0, seed=0, max_iter=600,
        log_every=0, stopping=FULL_BUDGET, precision="float64", perplexity=30.0,
    )  # fmt: skip
    return {**base, **changes}


def embed(folder, cell, out, first=None, **changes) -> dict:
    """Run the snest.embed step on the artifact in ``folder`` (the block of restarts from
    ``first``, a wildcard, where given); the runs file's content."""
    data = [str(folder / name) for name in ("data.npz", "items.tsv", "meta.json")]
    arguments = dict(data=data, runs_file=str(out), dataset=folder.name, cell=cell)
    if first is not None:
        arguments["first"] = str(first)
    steps.call("snest.embed", embed_settings(**changes), arguments)
    return runs.load_runs(out)


def test_cells_parse_and_label():
    assert cells.parse_cell("snest-2-1") == ("snest", 2, 1)
    assert cells.parse_cell("tsne-3") == ("tsne", 3, 0)
    assert cells.cell_label("snest-3-1") == "SNEST R^{3,1}"
    assert cells.budget("snest-2-1") == cells.budget("tsne-3") == 3
    for bad in ("tsne-2-1", "snest-2", "pca-2"):
        with pytest.raises(ValueError, match="cell"):
            cells.parse_cell(bad)


def test_time_ratio_sets_the_time_learning_rate():
    est = cells.make_estimator("snest-2-1", learning_rate=10.0, time_ratio=0.01)
    assert est.learning_rate_time == pytest.approx(0.1)
    assert not hasattr(
        cells.make_estimator("tsne-2", learning_rate=10.0, time_ratio=0.01), "learning_rate_time"
    )


@pytest.fixture(scope="module")
def school_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("snest")
    artifacts.save(build_school({}), tmp / "school", "school")
    files = []
    for cell in ("tsne-2", "tsne-3", "snest-2-1"):
        out = tmp / f"{cell}.npz"
        # one grid for every cell: SNE and t-SNE drop SNEST's time keys
        embed(tmp / "school", cell, out, grid={"learning_rate": [10.0], "time_ratio": [0.01]})
        files.append(out)
    return tmp, files


def test_the_runs_file_keeps_the_cells_settings(school_runs):
    _, files = school_runs
    tsne, snest = runs.load_runs(files[0])["meta"], runs.load_runs(files[2])["meta"]
    assert tsne["grid"] == {"learning_rate": [10.0]} and tsne["precision"] == "float64"
    assert snest["grid"] == {"learning_rate": [10.0], "time_ratio": [0.01]}
    assert snest["dataset"] == "school" and snest["n_restarts"] == 2 and snest["n_time"] == 1
    assert snest["stopping"] == FULL_BUDGET


def test_table_puts_the_paper_beside_ours(school_runs):
    _, files = school_runs
    df = table1.kl_table(files, REPO / "config" / "paper_values" / "snest_table1.csv")
    assert list(df["cell"]) == ["tsne-2", "snest-2-1", "tsne-3"]  # sorted by budget
    row = df.set_index("cell").loc["tsne-2"]
    assert row["paper_kl"] == 0.61 and row["runs"] == "2/2"
    assert row["diff"] == pytest.approx(row["kl"] - 0.61, abs=1e-4)
    # the same budget (3): SNEST R^{2,1} and t-SNE R^3 compete, one wins
    winners = set(df[df["budget"] == 3]["winner_in_budget"])
    assert len(winners) == 1 and winners <= {"SNEST R^{2,1}", "t-SNE R^3"}
    matrix = table1.kl_matrix(df, ["school"])
    assert matrix.shape == (3, 2) and "(0.61)" in matrix.iloc[0]["school"]
    claims = table1.space_time_claims(df)
    assert list(claims["rival"]) == [df.set_index("cell").loc["tsne-3", "kl"]]


def test_the_table_step_writes_the_long_form_and_the_papers_layout(school_runs, tmp_path):
    _, files = school_runs
    out = {k: str(tmp_path / f"t.{k}") for k in ("csv", "md")}
    out["md_long"] = str(tmp_path / "long.md")
    steps.call(
        "snest.table",
        {"datasets": ["school"], "left_out": {"mine": "snest needs at least 32 points"}},
        dict(run_files=[str(f) for f in files], paper=str(REPO / "config" / "paper_values"
                                                          / "snest_table1.csv"), **out),
    )  # fmt: skip
    assert len(pd.read_csv(out["csv"])) == 3
    text = (tmp_path / "t.md").read_text()
    assert text.startswith("# SNEST Table 1: minimal KL")
    assert re.search(r"\| SNEST R\^\{2,1\} +\| 0\.\d\d \(0\.\d\d\)", text), text
    assert "SNEST R^{2,1} beat the Euclidean" in text and "snest needs at least 32" in text
    assert "SNEST Table 1 (long form)" in (tmp_path / "long.md").read_text()


def test_figures_are_written(school_runs, tmp_path):
    tmp, files = school_runs
    data = [str(tmp / "school" / name) for name in ("data.npz", "items.tsv", "meta.json")]

    def paths(stem):
        return {"png": str(tmp_path / f"{stem}.png"), "pdf": str(tmp_path / f"{stem}.pdf")}

    figure = dict(runs_file=str(files[2]), data=data, fig="fig2a", **paths("fig2a"))
    steps.call("snest.figure", {}, figure)
    steps.call("snest.kernel_figure", {}, paths("fig2b"))
    for stem in ("fig2a", "fig2b"):
        for ext in ("png", "pdf"):
            assert (tmp_path / f"{stem}.{ext}").stat().st_size > 1000
    with pytest.raises(ValueError, match="shows SNEST R\\^\\{2,1\\}"):
        steps.call("snest.figure", {}, {**figure, "runs_file": str(files[0]), **paths("bad")})


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
    saved = {
        name: embed(tmp / "school", "snest-3-1", tmp_path / f"{name}.npz", grid=grid,
                    restarts=4, max_iter=5000, stopping=stopping)
        for name, stopping in (("full", FULL_BUDGET), ("abandon", abandon))
    }  # fmt: skip
    full, cut = saved["full"], saved["abandon"]
    same = ("learning_rate", "seed", "cost", "n_iter")
    assert {k: cut["best"][k] for k in same} == {k: full["best"][k] for k in same}
    stops = [r["stop"] for r in cut["runs"]]
    assert "abandoned" in stops, stops
    spent = sum(r["n_iter"] for r in cut["runs"])
    assert spent < sum(r["n_iter"] for r in full["runs"])


def test_a_cell_split_over_jobs_merges_into_the_runs_file_of_one_job(school_runs, tmp_path):
    """5 restarts at 2 per job: blocks from restarts 0, 2 and 4 (the last of one), merged,
    are the one job's runs file: the same runs in the same order (seeds, costs, maps), the
    same best and meta. Abandoning is off: with it, each block compares its runs with its
    own best, so a split cell may finish runs that one job abandons."""
    tmp, _ = school_runs
    grid = {"learning_rate": [10.0, 100.0]}
    kw = dict(grid=grid, restarts=5, max_iter=150, seed=3)
    whole = embed(tmp / "school", "tsne-2", tmp_path / "whole.npz", **kw)
    parts = [tmp_path / f"from_{first}.npz" for first in (0, 2, 4)]
    for first, part in zip((0, 2, 4), parts, strict=True):
        block = embed(tmp / "school", "tsne-2", part, first=first, restarts_per_job=2, **kw)
        assert [r["seed"] for r in block["runs"]] == [3 + first, 4 + first][: 5 - first] * 2
    merged_file = tmp_path / "merged.npz"
    where = {"dataset": "school", "cell": "tsne-2"}
    steps.call("snest.merge", {}, {"parts": [str(p) for p in parts],
                                   "runs_file": str(merged_file), **where})  # fmt: skip
    merged = runs.load_runs(merged_file)
    timeless = [{k: v for k, v in r.items() if k != "seconds"} for r in merged["runs"]]
    assert timeless == [{k: v for k, v in r.items() if k != "seconds"} for r in whole["runs"]]
    for k in range(len(whole["runs"])):
        np.testing.assert_array_equal(merged["embedding"](k), whole["embedding"](k))
        np.testing.assert_array_equal(merged["trace"](k), whole["trace"](k))
    assert merged["best"]["seed"] == whole["best"]["seed"] and merged["meta"] == whole["meta"]
    np.testing.assert_array_equal(merged["best_embedding"], whole["best_embedding"])
    # a block of another cell is refused, naming it
    other = embed(tmp / "school", "tsne-3", tmp_path / "other.npz", first=0, restarts_per_job=2,
                  **kw)  # fmt: skip
    assert other["meta"]["cell"] == "tsne-3"
    mixed = {"parts": [str(parts[0]), str(tmp_path / "other.npz")],
             "runs_file": str(tmp_path / "bad.npz"), **where}  # fmt: skip
    with pytest.raises(ValueError, match="other.npz: not a block of tsne-2 on school"):
        steps.call("snest.merge", {}, mixed)


def test_paper_yaml_splits_the_long_cells_into_jobs_and_the_default_does_not():
    """config/paper.yaml runs each GrQc cell as 20 one-restart jobs (and W5000's as 5 of 4
    restarts, ...), each merged into the cell's runs file; the default runs each cell in one
    job."""
    paper = planned_jobs(["config/config.yaml", "config/paper.yaml"],
                         ["results/embeddings/snest/grqc/tsne-2.npz",
                          "results/embeddings/snest/school/tsne-2.npz"])  # fmt: skip
    by_rule = {}
    for job in paper:
        by_rule.setdefault(job["rule"], []).append(job)
    parts = sorted(int(job["wildcards"]["first"]) for job in by_rule["snest_embed_part"])
    assert parts == list(range(20))
    assert [j["wildcards"]["dataset"] for j in by_rule["snest_merge"]] == ["grqc"]
    assert [j["wildcards"]["dataset"] for j in by_rule["snest_embed"]] == ["school"]
    default = planned_jobs(["config/config.yaml"], ["results/embeddings/snest/grqc/tsne-2.npz"])
    assert [j["rule"] for j in default if j["rule"].startswith("snest")] == ["snest_embed"]


def save_blobs(folder, seed: int, dims: int, shift: float) -> None:
    """A user's vectors dataset ``folder/blobs``: two Gaussian blobs of 20 points, ``shift``
    apart in every one of ``dims`` coordinates."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(20, dims)), rng.normal(size=(20, dims)) + shift])
    art = artifacts.Artifact(
        kind="vectors", arrays={"X": X}, items=pd.DataFrame({"name": map(str, range(40))}),
        meta={},
    )  # fmt: skip
    artifacts.save(art, folder / "blobs", "blobs")


def test_a_vectors_artifact_runs_on_its_perplexity_P(tmp_path):
    """A user's vectors dataset joins Table 1 through t-SNE's joint P at the perplexity."""
    save_blobs(tmp_path, seed=0, dims=4, shift=6.0)
    out = tmp_path / "tsne-2.npz"
    best = embed(tmp_path / "blobs", "tsne-2", out, restarts=1, max_iter=200, perplexity=10.0)
    assert np.isfinite(best["best"]["cost"]) and best["best"]["cost"] > 0
    with pytest.raises(ValueError, match="needs more than 41 points, got 40"):
        embed(tmp_path / "blobs", "tsne-2", out, restarts=1, max_iter=200, perplexity=40.0)


def test_a_cell_whose_every_run_fails_is_reported_not_raised(tmp_path):
    """A time learning rate that diverges on every restart (the time coordinates pass their
    limit): the step still writes its runs file (each run's error kept), and the table
    reports the cell as failed with the reason."""
    save_blobs(tmp_path, seed=1, dims=3, shift=5.0)
    out = tmp_path / "snest-1-1.npz"
    grid = {"learning_rate": [100.0], "time_ratio": [1e6]}
    data = embed(tmp_path / "blobs", "snest-1-1", out, grid=grid, restarts=2, max_iter=200,
                 perplexity=10.0)  # fmt: skip
    assert data["best"] is None
    assert [r["cost"] for r in data["runs"]] == [None, None]
    assert all(r["error"].startswith("DivergenceError") for r in data["runs"])
    paper = REPO / "config" / "paper_values" / "snest_table1.csv"
    row = table1.kl_table([out], paper).iloc[0]
    assert pd.isna(row["kl"]) and row["runs"] == "0/2"
    assert row["verdict"].startswith("failed: all 2 runs (DivergenceError")
    assert row["verdict"].endswith("snest.grid_by_dataset.blobs for this dataset")
    assert "| failed" in table1.table1_markdown(table1.kl_table([out], paper), ["blobs"], {})


def snest_grids(overrides: dict):
    """The workflow's grid of each (dataset, cell) (workflow/rules/snest_helpers.smk's
    snest_grid) under config/config.yaml's snest section with ``overrides`` merged over it,
    as Snakemake merges a --configfile, and the schema's defaults."""
    from snakemake.utils import update_config, validate

    section = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["snest"]
    update_config(section, overrides)
    validate(section, str(REPO / "workflow" / "schemas" / "snest.schema.yaml"))
    helpers = {"SNEST": section}
    exec((REPO / "workflow" / "rules" / "snest_helpers.smk").read_text(), helpers)
    return helpers["snest_grid"]


def test_a_partial_per_dataset_override_merges_into_its_methods_grid():
    """snest.grid_by_dataset names only what it changes: the rest of the cell's grid comes
    from the method's grid, then grid.default; other datasets and methods keep theirs."""
    grid = snest_grids(
        {
            "grid": {"tsne": {"learning_rate": [5.0]}},
            "grid_by_dataset": {
                "w1000": {"snest": {"learning_rate": [100.0]}},
                "karate": {"default": {"learning_rate": [50.0]}, "snest": {"time_ratio": [0.1]}},
            },
        }
    )
    every_rate = [1.0, 10.0, 100.0]
    assert grid("w1000", "snest-2-1") == {"learning_rate": [100.0], "time_ratio": [0.01]}
    assert grid("school", "snest-2-1") == {"learning_rate": every_rate, "time_ratio": [0.01]}
    assert grid("w1000", "tsne-2") == {"learning_rate": [10.0, 100.0]}  # config.yaml's own
    assert grid("karate", "tsne-3") == {"learning_rate": [50.0]}
    assert grid("karate", "snest-2-1") == {"learning_rate": [50.0], "time_ratio": [0.1]}
    assert grid("nodata", "tsne-2") == {"learning_rate": [5.0]}
    assert grid("nodata", "sne-2") == {"learning_rate": every_rate}
    assert list(grid("nodata", "snest-1-1")) == ["learning_rate", "time_ratio"]


def job_settings(configfiles: list[str], rule: str, jobs: list[dict]) -> list[dict]:
    """The settings of rule ``rule``'s job of each wildcards of ``jobs`` under ``configfiles``
    (benchmarks/workflow_jobs.py: Snakemake evaluates the rule's own params.settings)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import workflow_jobs
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return workflow_jobs.job_settings(configfiles, rule, jobs)[1]


def embed_jobs(configfiles: list[str], jobs: list[tuple[str, str]]) -> dict:
    """(dataset, cell) -> the snest.embed settings of that job under ``configfiles``."""
    wildcards = [{"dataset": d, "cell": c} for d, c in jobs]
    return dict(zip(jobs, job_settings(configfiles, "snest_embed", wildcards), strict=True))


def test_each_job_gets_its_datasets_grid_and_restarts(tmp_path):
    """The settings the workflow hands each Table 1 job: a partial grid_by_dataset entry
    merged into its method's grid, every other dataset's and method's grid its own, the
    per-dataset restarts resolved; config/paper.yaml's restarts (100, 20 for n > 2000)."""
    partial = tmp_path / "partial.yaml"  # config.yaml overrides no SNEST grid on school
    partial.write_text("snest: {grid_by_dataset: {school: {snest: {time_ratio: [0.1]}}}}\n")
    jobs = [(d, c) for d in ("school", "w1000", "grqc") for c in ("tsne-2", "snest-2-1")]
    found = embed_jobs(["config/config.yaml", str(partial)], jobs)
    every_rate = [1.0, 10.0, 100.0]
    assert found["school", "snest-2-1"]["grid"] == {"learning_rate": every_rate,
                                                   "time_ratio": [0.1]}  # fmt: skip
    assert found["school", "tsne-2"]["grid"] == {"learning_rate": [10.0, 500.0]}
    assert found["w1000", "snest-2-1"]["grid"] == {"learning_rate": [10.0], "time_ratio": [0.01]}
    assert found["grqc", "tsne-2"]["grid"] == {"learning_rate": [100.0, 500.0]}
    assert {d: found[d, "tsne-2"]["restarts"] for d in ("school", "w1000", "grqc")} == {
        "school": 20, "w1000": 5, "grqc": 1
    }  # fmt: skip
    assert found["school", "tsne-2"]["stopping"] == {
        "rate_window": 500, "plateau_tol": 1e-5, "abandon_margin": 0.0
    }  # fmt: skip
    paper = embed_jobs(["config/config.yaml", "config/paper.yaml"], jobs)
    assert {d: paper[d, "tsne-2"]["restarts"] for d in ("school", "w1000", "grqc")} == {
        "school": 100, "w1000": 100, "grqc": 20
    }  # fmt: skip


def test_the_table_names_the_own_datasets_it_leaves_out(tmp_path):
    """An own dataset below SNEST's perplexity (30: 32 points) gets no Table 1 job; the table
    step's settings say why, and its columns are the papers' datasets."""
    small = tmp_path / "small.csv"
    small.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(20)))
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        f"own_datasets:\n  small: {{kind: vectors, format: csv, path: {small}, labels: label}}\n"
    )
    (settings,) = job_settings(["config/quick.yaml", str(mine)], "snest_table", [{}])
    assert settings["datasets"] == ["school", "nips17"]
    assert "snest needs at least 32 points" in settings["left_out"]["small"]
