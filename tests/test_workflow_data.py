"""Where data comes from and what a user declares: mirrors are not job parameters, own
datasets join every table of their kind, bad declarations fail before any job in a few lines."""

from __future__ import annotations

import re
import shutil
import textwrap

import pandas as pd
import pytest
import yaml

from .conftest import REPO
from .helpers import snakemake
from .test_workflow import _planned_jobs


@pytest.mark.slow
def test_moving_or_adding_a_mirror_reruns_nothing(tmp_path, tiny_run):
    work = tiny_run(tmp_path)  # a finished run, its mirror at tmp_path / "mirror"
    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "mirror", moved)
    config = work / "config" / "config.yaml"
    data = yaml.safe_load(config.read_text())
    for mirror in (str(moved), [str(tmp_path / "none"), str(moved), str(tmp_path / "mirror")]):
        data["data"]["mirror"] = mirror
        config.write_text(yaml.safe_dump(data))
        plan = snakemake("--cores", "1", "--directory", str(work), "--dry-run", cwd=work)
        assert "Nothing to be done" in plan.stdout + plan.stderr, (mirror, plan.stdout[-3000:])


def _dry_run(*configs, check=False):
    args = ["--dry-run", "--printshellcmds", "--cores", "1", "--configfile", *map(str, configs)]
    return snakemake(*args, check=check)


def test_own_datasets_join_every_table_of_their_kind_in_the_dry_run():
    proc = _dry_run("config/config.yaml", "config/examples/own_datasets.yaml", check=True)
    out = proc.stdout
    assert "Exception" not in out + proc.stderr  # e.g. a rule matching names it must not
    jobs = _planned_jobs(out)
    assert jobs["build_own_dataset"] == 4
    # similarity -> SNEST Table 1; vectors with labels -> EE and Diffeomap; triplets -> t-STE;
    # cooccurrence -> D-CODE Table 2 (each observation model and size) and its map
    assert re.search(r"snest_embed:.*\n(.*\n)*?\s+wildcards: dataset=karate", out)
    assert "results/embeddings/ee/digits60.csv" in out
    assert re.search(r"wildcards: .*dataset=digits60\b", out)
    assert "results/tables/tste_digits60_triplets.csv" in out
    assert jobs["dcode_own_rank"] == 2 * 3  # config.yaml: 2 observation models, 3 sizes
    assert "results/dcode/own/topic_swap/rank_counts_40a_348w.json" in out
    assert "results/figures/dcode_map_topic_swap.png" in out
    assert "results/tables/datasets.csv" in out


def test_an_own_cooccurrence_table_with_too_few_periods_is_left_out_of_dcode(tmp_path):
    short = tmp_path / "short.csv"
    short.write_text("time,row,column,count\n1,a,x,1\n2,b,y,1\n3,c,z,2\n3,d,x,1\n")
    mine = _write(
        tmp_path, f"own_datasets:\n  short: {{kind: cooccurrence, format: csv, path: {short}}}\n"
    )
    out = _dry_run("config/quick.yaml", mine, check=True).stdout
    assert "build_own_dataset" in out  # built for the datasets table, which says why
    assert "results/dcode/own/short/" not in out and "dcode_map_short" not in out


def _write(tmp_path, text):
    path = tmp_path / "mine.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_config_typo_names_the_key_where_and_the_nearest_one(tmp_path):
    bad = _write(tmp_path, "snest:\n  restart: {default: 2}\n")
    proc = _dry_run("config/quick.yaml", bad)
    err = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "snest: unknown key 'restart'; did you mean 'restarts'?" in err
    assert "$schema" not in err and len(err.splitlines()) < 40


def test_a_bad_own_dataset_entry_and_an_unknown_name_are_named(tmp_path):
    bad = _write(tmp_path, "own_datasets:\n  mine: {kind: vectors, format: edges, path: x.csv}\n")
    proc = _dry_run("config/quick.yaml", bad)
    assert proc.returncode != 0
    assert "own_datasets.mine.format: 'edges' is not a format of kind 'vectors'" in proc.stdout
    unknown = _write(tmp_path, "ee:\n  datasets: [iris, nosuch]\n")
    proc = _dry_run("config/quick.yaml", unknown)
    assert proc.returncode != 0
    assert "config ee.datasets names unknown dataset(s) ['nosuch']" in proc.stdout
    assert "iris" in proc.stdout.split("nosuch")[-1]  # the valid names follow


def test_the_example_files_are_in_the_repository():
    example = yaml.safe_load((REPO / "config" / "examples" / "own_datasets.yaml").read_text())
    for entry in example["own_datasets"].values():
        assert (REPO / entry["path"]).is_file()


def test_an_unknown_dataset_as_a_target_lists_the_valid_names():
    proc = snakemake("--dry-run", "--cores", "1", "results/datasets/nosuch/meta.json", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "the target names unknown dataset(s) ['nosuch']" in out
    assert "school" in out.split("['nosuch']")[1]


@pytest.mark.slow
def test_the_documented_example_puts_each_own_dataset_in_every_table_of_its_kind(tmp_path, mirror):
    """config/examples/own_datasets.yaml as the README runs it (quick protocol), with the
    papers' own datasets left out of the experiments, all but iris unbuilt, one SNEST cell,
    one t-STE method on one fold and PCA the only Diffeomap baseline, to keep the test short
    (one of each suffices for a dataset to reach a table): each example dataset is built and
    appears in SNEST Table 1 (similarity, and vectors through their perplexity P), the EE
    and Diffeomap tables (labelled vectors) and its t-STE table (labelled triplets), and the
    dataset summary says where each went. The co-occurrence table gets its D-CODE rank job
    (one size, one observation model, D-CODE and chance) and its map."""
    work = tmp_path / "work"
    shutil.copytree(REPO / "config", work / "config")
    narrow = _write(
        tmp_path,
        f"""\
        data: {{mirror: {mirror}}}
        datasets: {{build: [iris]}}
        snest: {{datasets: [], cells: [tsne-2]}}
        ee: {{datasets: []}}
        diffeomap: {{table_datasets: [], figures: [], baselines: [pca]}}
        tste: {{datasets: [], protocols: [paper_text], methods: [t-STE-X],
                folds_used: {{digits60_triplets: 1}}}}
        dcode: {{observations: [counts], methods: [dcode], references: [chance], subsets: 2,
                 grid_extensions: 0}}
        """,
    )
    tables = ["datasets", "snest_kl", "ee_sweep", "diffeomap_1nn", "tste_digits60_triplets",
              "dcode_map_topic_swap"]  # fmt: skip
    targets = [f"results/tables/{t}.csv" for t in tables]
    targets.append("results/dcode/own/topic_swap/rank_counts_20a_188w.json")
    configs = ["config/quick.yaml", "config/examples/own_datasets.yaml", str(narrow)]
    snakemake(
        "--cores", "2", "--directory", str(work), *targets, "--configfile", *configs, cwd=work
    )  # fmt: skip
    out = work / "results" / "tables"
    summary = pd.read_csv(out / "datasets.csv").set_index("dataset")
    assert set(summary.index) == {"iris", "digits60", "digits60_triplets", "karate",
                                  "topic_swap"}  # fmt: skip
    assert summary.loc["digits60", "n"] == 60 and summary.loc["karate", "n"] == 34
    assert {"karate", "digits60"} <= set(pd.read_csv(out / "snest_kl.csv")["dataset"])
    assert "digits60" in set(pd.read_csv(out / "ee_sweep.csv")["dataset"])
    assert "digits60" in set(pd.read_csv(out / "diffeomap_1nn.csv")["dataset"])
    assert len(pd.read_csv(out / "tste_digits60_triplets.csv")) > 0
    assert len(pd.read_csv(out / "dcode_map_topic_swap.csv")) == 20 + 20
    ranked = yaml.safe_load((work / "results/dcode/own/topic_swap/rank_counts_20a_188w.json")
                            .read_text())  # fmt: skip
    assert ranked["size"] == [4, 8] and ranked["dataset"] == "topic_swap"
    notes = (out / "datasets.md").read_text()
    assert "**digits60**: in diffeomap, ee, snest\n" in notes
    assert "**karate**: in snest\n" in notes and "**digits60_triplets**: in tste\n" in notes
    assert "**topic_swap**: in dcode\n" in notes


def test_an_own_dataset_too_small_for_a_papers_perplexity_is_left_out_of_it(tmp_path):
    small = tmp_path / "small.csv"
    small.write_text("a,b,c,label\n" + "".join(f"{i},{i % 3},{i % 5},{i % 2}\n" for i in range(20)))
    mine = _write(
        tmp_path,
        f"own_datasets:\n  small: {{kind: vectors, format: csv, path: {small}, labels: label}}\n",
    )
    out = _dry_run("config/quick.yaml", mine, check=True).stdout
    assert "results/embeddings/ee/small.csv" not in out  # EE's perplexity 40 needs 42 points
    assert "dataset=small, cell=" not in out  # nor SNEST's perplexity 30 (32 points)
    assert "dataset=small, stage=" in out  # Diffeomap takes it
    # each table that leaves it out says why in its notes (the reasons reach EE's and SNEST's
    # tables as their steps' settings, which a dry run does not print: tests/test_steps.py and
    # tests/test_experiment_snest.py render them)


def test_a_failed_job_shows_its_error_in_snakemakes_own_output(tmp_path):
    """A job stopped by bad input prints its one-line error where the user is looking, not
    only in its log, and leaves no finished output."""
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,label\n1,2,x\n3,n/a,y\n")
    work = tmp_path / "work"
    (work / "config").mkdir(parents=True)
    (work / "config" / "config.yaml").write_text(
        f"data: {{registry: {REPO}/config/datasets.yaml, raw_dir: resources/raw, offline: true}}\n"
        "datasets: {build: [swissroll]}\n"
        f"own_datasets:\n  badone: {{kind: vectors, format: csv, path: {bad}, labels: label}}\n"
    )
    target = "results/datasets/badone/meta.json"
    proc = snakemake("--directory", str(work), "--cores", "1", target, cwd=work, check=False)
    assert proc.returncode != 0
    error = (
        f"embedlab datasets.build_own: error: {bad}, line 3, column 2 ('b'): 'n/a' is not a number"
    )
    assert error in proc.stdout + proc.stderr
    assert error in (work / "logs" / "datasets" / "badone.log").read_text()
    assert not (work / target).exists()
