"""Shared set-up: config validation, the dataset registry, helpers for inputs."""

import importlib.util
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

SRC = Path(workflow.basedir, "src")

# Rules run `python -m embedlab`: make this checkout's package importable even where it is
# not installed (e.g. in a conda env built from workflow/envs/embedlab.yaml, or on a cluster
# node), keep bash's strict mode, and name the workflow's code, which a job whose `embedlab`
# is another checkout's refuses to stand in for (embedlab.codeprint.check_same_code).
shell.prefix(
    "set -euo pipefail; export OMP_WAIT_POLICY=${{OMP_WAIT_POLICY:-PASSIVE}}; "
    f"export PYTHONPATH={SRC}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; "
    f"export EMBEDLAB_WORKFLOW_SRC={SRC}; "
)


def _load_codeprint():
    """embedlab/codeprint.py, loaded as a file: the package itself is not imported here."""
    spec = importlib.util.spec_from_file_location(
        "embedlab_codeprint", SRC / "embedlab" / "codeprint.py"
    )
    codeprint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(codeprint)
    return codeprint.CodePrints(SRC)


CODEPRINTS = _load_codeprint()


def code_of(verb, *modules):
    """Fingerprint of the package code that `python -m embedlab verb` runs (and `modules`,
    which it imports by computed name): every rule passes it as `params.code`, so an edit
    to that code, and to no other, makes the rule's jobs out of date. Comments, docstrings
    and layout do not count (embedlab/codeprint.py)."""
    return CODEPRINTS.of(verb, *modules)


def check_job_python(extra=None):
    """Fail before any job runs where the rules' `python` lacks a runtime dependency named in
    pyproject.toml (e.g. `.venv/bin/snakemake` called without .venv/bin on PATH: every job
    would die on an import), or, given `extra`, one of that optional extra's (a section that
    needs it calls this again). Skipped where Snakemake deploys the conda env, which brings
    its own python."""
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
        project = tomllib.load(fh)["project"]
    wanted = project["dependencies"]
    if extra is not None:
        wanted = wanted + project["optional-dependencies"][extra]
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
        needs = f"extra `{extra}` of {pyproject.name}" if extra else pyproject.name
        raise WorkflowError(
            f"`python` on PATH ({python}) lacks {', '.join(missing)}, which the rules need "
            f"({needs}); run `make reproduce`, or put the project's environment "
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
MIRROR = config["data"]["mirror"]


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
    """Builder parameters that the config overrides for dataset `name` ({} = none)."""
    overrides = config["datasets"]["overrides"]
    return overrides[name] if name in overrides else {}


def per_dataset(mapping, name):
    """`mapping[name]` if the config sets it for dataset `name`, else `mapping["default"]`."""
    return mapping[name] if name in mapping else mapping["default"]


def dataset_artifacts(names=None):
    """The meta.json of each artifact: the file written last, so it marks completion."""
    names = selected_datasets() if names is None else names
    return [f"results/datasets/{n}/meta.json" for n in names]


def artifact(name):
    """All three files of artifact `name` (use as input of a rule that reads it)."""
    return multiext(f"results/datasets/{name}/", "data.npz", "items.tsv", "meta.json")


def builder_module(name):
    """The package module of dataset `name`'s builder (registry entry `builder: module.function`),
    which `python -m embedlab build` imports by name."""
    builder = REGISTRY["datasets"][name]["builder"].rpartition(".")[0]
    return f"embedlab.datasets.{builder}"


def raw_inputs(wildcards):
    """Verified raw files that dataset `wildcards.dataset` is built from."""
    return [f"{RAW_DIR}/{f}" for f in REGISTRY["datasets"][wildcards.dataset]["files"]]


# final outputs of each paper (the default target asks for them all); each paper's .smk,
# included when the config has its section, adds its own entry PAPER_TARGETS["<section>"]
PAPER_TARGETS = {}


def paper_targets():
    return [t for targets in PAPER_TARGETS.values() for t in targets]
