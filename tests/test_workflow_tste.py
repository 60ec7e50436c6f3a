"""Each t-STE job of a planned run gets the settings of its reading, dataset and method: the
derived fields that workflow/rules/tste_helpers.smk resolves from the config. A dry run does
not print a script job's parameters, so the plan is built through Snakemake's Python API in a
subprocess that prints each job's rule, wildcards and settings (benchmarks/workflow_jobs.py)."""

from __future__ import annotations

import pytest
import yaml

from .conftest import REPO
from .helpers import planned_jobs


@pytest.fixture(scope="module")
def quick_jobs() -> list[dict]:
    """The t-STE jobs of the quick configuration's plan."""
    jobs = planned_jobs(["config/config.yaml", "config/quick.yaml"], ["tste"])
    return [job for job in jobs if job["step"].startswith("tste.")]


def _of(jobs, rule, **wildcards):
    return [j for j in jobs if j["rule"] == rule and wildcards.items() <= j["wildcards"].items()]


def test_the_jobs_get_their_dataset_and_methods_entries(quick_jobs):
    """Per-dataset and per-method entries of the config reach their jobs only: the paper
    text's grid per method and triplet subset per dataset; the authors' grid per (dataset,
    method), their 1-NN training set (music: all, CKL-X first), the authors_figure reading's
    solver options; each map's protocol, iterations and triplets."""
    quick = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())["tste"]
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["tste"]
    authors = quick["authors_code"]
    # the paper text's grids: quick's merged over the default's; a dataset's grids_by_dataset
    # entry (the default's: music's K forms) replaces its method's
    grids, by_dataset = {**default["grids"], **quick["grids"]}, default["grids_by_dataset"]
    tuned = set()
    for job in _of(quick_jobs, "tste_search") + _of(quick_jobs, "tste_part"):
        wc, settings = job["wildcards"], job["settings"]
        override = by_dataset.get(wc["dataset"], {})
        expected = override.get(wc["method"], grids.get(wc["method"], {}))
        assert settings["grid"] == expected, job
        tuned |= {(wc["dataset"], wc["method"])} if wc["method"] in override else set()
        assert settings["max_triplets"] == quick["max_triplets"].get(wc["dataset"]), job
    assert ("music", "STE-K") in tuned and ("music", "CKL-X") not in tuned
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
    assert nn[("music", "CKL-X")] == "first" and nn[("music", "GNMDS-K")] == "all"
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
    assert maps[("tste", "mnist_triplets_1k_authors", "CKL-X")] == {
        "protocol": "authors_code", "max_iter": 100, "max_triplets": None, "solver": {},
    }  # fmt: skip
    assert maps[("tste_authors_figure", "mnist_triplets_1k_authors", "t-STE-X")]["solver"] == {
        "alpha": 1,
        "use_log": False,
    }
    (claims,) = _of(quick_jobs, "tste_claims", prefix="tste")
    assert claims["settings"] == {"left_out": {}}
