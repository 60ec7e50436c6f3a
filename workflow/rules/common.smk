"""Shared set-up: config validation, the dataset registry, helpers for inputs."""

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.settings.types import DeploymentMethod
from snakemake.utils import validate

validate(config, schema="../schemas/config.schema.yaml")

# Rules run `python -m embedlab`: make this checkout's package importable even where it is
# not installed (e.g. in a conda env built from workflow/envs/embedlab.yaml, or on a cluster
# node), and keep bash's strict mode.
shell.prefix(
    "set -euo pipefail; export OMP_WAIT_POLICY=${{OMP_WAIT_POLICY:-PASSIVE}}; "
    f"export PYTHONPATH={Path(workflow.basedir, 'src')}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; "
)


def check_job_python():
    """Fail before any job runs where the rules' `python` lacks a runtime dependency named in
    pyproject.toml (e.g. `.venv/bin/snakemake` called without .venv/bin on PATH: every job
    would die on an import). Skipped where Snakemake deploys the conda env, which brings its
    own python."""
    pyproject = Path(workflow.basedir, "pyproject.toml")
    if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
        return
    if not pyproject.exists():
        return
    python = shutil.which("python")
    if python is None:
        raise WorkflowError(
            "the rules call `python -m embedlab`, but there is no `python` on PATH; run "
            "`make reproduce`, or put the project's environment first: "
            "PATH=$PWD/.venv/bin:$PATH snakemake ..."
        )
    with open(pyproject, "rb") as fh:
        wanted = tomllib.load(fh)["project"]["dependencies"]
    names = [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in wanted]
    probe = (
        "import importlib.metadata as m, sys\n"
        "for d in sys.argv[1:]:\n"
        "    try: m.version(d)\n"
        "    except m.PackageNotFoundError: print(d)"
    )
    args = [python, "-c", probe, *(n for n in names if n != "snakemake")]
    missing = subprocess.run(
        args, capture_output=True, text=True, check=True
    ).stdout.split()
    if missing:
        raise WorkflowError(
            f"`python` on PATH ({python}) lacks {', '.join(missing)}, which the rules need "
            f"({pyproject.name}); run `make reproduce`, or put the project's environment "
            "first: PATH=$PWD/.venv/bin:$PATH snakemake ..."
        )


check_job_python()


def load_registry(path):
    with open(path) as fh:
        registry = yaml.safe_load(fh)
    validate(registry, schema="../schemas/datasets.schema.yaml")
    return registry


REGISTRY_PATH = config["data"]["registry"]
REGISTRY = load_registry(REGISTRY_PATH)
RAW_DIR = config["data"]["raw_dir"]
MIRROR = config["data"].get("mirror")


def selected_datasets():
    """Names of the dataset artifacts this run builds."""
    build = config["datasets"]["build"]
    names = list(REGISTRY["datasets"]) if build == "all" else list(build)
    unknown = [n for n in names if n not in REGISTRY["datasets"]]
    if unknown:
        raise ValueError(
            f"config datasets.build names unknown dataset(s) {unknown}; "
            f"the registry {REGISTRY_PATH} has {sorted(REGISTRY['datasets'])}"
        )
    return names


def dataset_overrides(name):
    return config["datasets"].get("overrides", {}).get(name, {})


def dataset_resource(name, key, default):
    return REGISTRY["datasets"][name].get("resources", {}).get(key, default)


def dataset_artifacts(names=None):
    """The meta.json of each artifact: the file written last, so it marks completion."""
    names = selected_datasets() if names is None else names
    return [f"results/datasets/{n}/meta.json" for n in names]


def artifact(name):
    """All three files of artifact `name` (use as input of a rule that reads it)."""
    return multiext(f"results/datasets/{name}/", "data.npz", "items.tsv", "meta.json")


def raw_inputs(wildcards):
    """Verified raw files that dataset `wildcards.dataset` is built from."""
    files = REGISTRY["datasets"][wildcards.dataset].get("files", [])
    return [f"{RAW_DIR}/{f}" for f in files]


def snest_grid(dataset, cell):
    """The parameter grid of a Table 1 cell on a dataset: the first of the dataset's override
    for the cell's method, the dataset's default override, the method's grid, the default.
    """
    method = cell.split("-")[0]
    grids = config["snest"]["grid"]
    override = config["snest"].get("grid_by_dataset", {}).get(dataset, {})
    for candidate in (override.get(method), override.get("default"), grids.get(method)):
        if candidate is not None:
            return candidate
    return grids["default"]


def snest_restarts(dataset):
    restarts = config["snest"]["restarts"]
    return restarts.get(dataset, restarts["default"])


def snest_runs():
    """Every runs file of Table 1: one per (dataset, cell)."""
    section = config.get("snest", {"datasets": [], "cells": []})
    return expand(
        "results/embeddings/snest/{dataset}/{cell}.npz",
        dataset=section["datasets"],
        cell=section["cells"],
    )


# SNEST figures showing the best snest-2-1 run of a dataset (fig2b needs no run)
SNEST_FIGURES = {"fig2a": "school", "fig3": "nips22", "fig4": "w5000"}

# final outputs of each paper, requested by `rule all` when the config has the paper's section;
# each paper's .smk adds its own entry: PAPER_TARGETS["<section>"] = [...]
PAPER_TARGETS = {
    "snest": ["results/tables/snest_kl.csv", "results/tables/snest_kl.md"]
    + expand(
        "results/figures/snest_{fig}.{ext}",
        fig=config.get("snest", {}).get("figures", []),
        ext=["png", "pdf"],
    ),
}


def paper_targets():
    return [t for section, ts in PAPER_TARGETS.items() if section in config for t in ts]


# the D-CODE variants (the per-token block re-runs only these)
DCODE_VARIANTS = ["dcode", "dcode_mle", "static_dcode", "static_dcode_mle"]


def dcode_rank_settings(wildcards):
    """The dcode-rank job's settings: the config section, methods by observation model (the
    per-token block re-runs only the D-CODE variants; the baselines do not depend on it).
    """
    methods = config["dcode"]["methods"]
    if wildcards.observation != config["dcode"]["observations"][0]:
        methods = [m for m in methods if m in DCODE_VARIANTS]
    else:
        methods = methods + config["dcode"]["references"]
    keys = [
        "subsets",
        "seed",
        "fit_step",
        "pool",
        "params",
        "grid",
        "val_subsets",
        "val_steps",
    ]
    keys += ["grid_extensions", "prediction", "paper_words"]
    settings = {key: config["dcode"][key] for key in keys}
    settings.update(observation=wildcards.observation, methods=methods)
    return json.dumps(settings)
