"""Each t-STE job of a planned run gets the settings of its reading, dataset and method: the
derived fields that workflow/rules/tste_helpers.smk resolves from the config. A dry run does
not print a script job's parameters, so the plan is built through Snakemake's Python API in a
subprocess that prints each job's rule, wildcards and settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from embedlab import steps

from .conftest import REPO

PLAN = """
import json
import sys
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.settings.types import (
    ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings, StorageSettings,
)

with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
    workflow = api.workflow(
        resource_settings=ResourceSettings(cores=2),
        config_settings=ConfigSettings(configfiles=[Path(c) for c in sys.argv[1:]]),
        storage_settings=StorageSettings(),
        snakefile=Path("Snakefile"),
        workdir=Path("."),
    )
    dag = workflow.dag(dag_settings=DAGSettings(targets={"tste"}, forceall=True))
    # the plan a dry run prints, with each job's parameters (Snakemake's own workflow object)
    planned = dag.workflow_api._workflow
    planned._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
    planned._build_dag()
    for job in planned.dag.jobs:
        if "step" in job.params.keys() and job.params.step.startswith("tste."):
            print(json.dumps({
                "rule": job.rule.name, "wildcards": dict(job.wildcards.items()),
                "step": job.params.step, "settings": job.params.settings,
            }))
"""


@pytest.fixture(scope="module")
def quick_jobs() -> list[dict]:
    """The t-STE jobs of the quick configuration's plan."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, "-c", PLAN, "config/config.yaml", "config/quick.yaml"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def _of(jobs, rule, **wildcards):
    return [j for j in jobs if j["rule"] == rule and wildcards.items() <= j["wildcards"].items()]


def test_every_job_gets_settings_its_step_takes(quick_jobs):
    assert len(quick_jobs) > 50
    for job in quick_jobs:
        kind = steps.settings_class(steps.step_function(job["step"]))
        if kind is None:
            assert job["settings"] == {}, job
        else:
            kind.from_mapping(job["settings"], where=job["step"])


def test_the_jobs_get_their_dataset_and_methods_entries(quick_jobs):
    """Per-dataset and per-method entries of the config reach their jobs only: the paper
    text's grid per method and triplet subset per dataset; the authors' grid per (dataset,
    method), their 1-NN training set (music: all, CKL-X first), the authors_figure reading's
    solver options; each map's protocol, iterations and triplets."""
    quick = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())["tste"]
    authors = quick["authors_code"]
    for job in _of(quick_jobs, "tste_search") + _of(quick_jobs, "tste_part"):
        wc, settings = job["wildcards"], job["settings"]
        assert settings["grid"] == quick["grids"].get(wc["method"], {}), job
        assert settings["max_triplets"] == quick["max_triplets"].get(wc["dataset"]), job
    for job in _of(quick_jobs, "tste_authors_search") + _of(quick_jobs, "tste_authors_part"):
        wc, settings = job["wildcards"], job["settings"]
        assert settings["grid"] == authors["grids"][wc["dataset"]].get(wc["method"], {}), job
        assert (settings["seed"], settings["max_iter"]) == (quick["seed"], authors["max_iter"])
        figure = {"t-STE-X": {"alpha": 1, "use_log": False}, "STE-X": {"use_log": False}}
        refit = wc["reading"] == "tste_authors_figure"
        assert settings["solver"] == (figure[wc["method"]] if refit else {}), job
    nn = {
        (j["wildcards"]["dataset"], j["wildcards"]["method"]): j["settings"]["nn_training"]
        for j in _of(quick_jobs, "tste_authors_part", reading="tste_authors", part="nn")
    }
    assert nn[("music", "CKL-X")] == "first" and nn[("music", "STE-K")] == "all"
    assert nn[("mnist_triplets_1k_authors", "t-STE-X")] == "first"
    maps = {
        (j["wildcards"]["maps"], j["wildcards"]["dataset"], j["wildcards"]["method"]): {
            k: j["settings"][k] for k in ("protocol", "max_iter", "max_triplets", "solver")
        }
        for j in _of(quick_jobs, "tste_map")
    }
    assert maps[("tste", "music", "t-STE-X")] == {
        "protocol": "paper_text", "max_iter": 300, "max_triplets": None, "solver": {},
    }  # fmt: skip
    assert maps[("tste", "mnist_triplets_5k_authors", "CKL-X")] == {
        "protocol": "authors_code", "max_iter": 100, "max_triplets": 100000, "solver": {},
    }  # fmt: skip
    assert maps[("tste_authors_figure", "mnist_triplets_5k_authors", "t-STE-X")]["solver"] == {
        "alpha": 1,
        "use_log": False,
    }
    (claims,) = _of(quick_jobs, "tste_claims", prefix="tste")
    assert claims["settings"] == {"left_out": {}}
