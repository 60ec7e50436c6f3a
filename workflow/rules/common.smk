"""Shared set-up: config validation, the dataset registry, helpers for inputs."""

import difflib
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import referencing
import referencing.jsonschema
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.settings.types import DeploymentMethod
from snakemake.utils import validate as snakemake_validate

SRC = Path(workflow.basedir, "src")
SCHEMAS = Path(workflow.basedir, "workflow", "schemas")


# safe_load's reading, with libyaml's parser where PyYAML has it (the schemas are read at every
# start of the workflow)
YAML_LOADER = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def read_yaml(text):
    """YAML `text` (or an open file), as yaml.safe_load reads it."""
    return yaml.load(text, Loader=YAML_LOADER)


# the schemas' references to each other (`$ref: "own_datasets.schema.yaml"`), read from SCHEMAS
SCHEMA_FILES = referencing.Registry(
    retrieve=lambda uri: referencing.jsonschema.DRAFT202012.create_resource(
        read_yaml((SCHEMAS / Path(uri).name).read_text())
    )
)


def config_problems(data, schema, where):
    """Every way `data` breaks `schema`, one short line each: where (`snest.restarts`),
    what, and for an unknown key the nearest valid one. Snakemake's own message prints the
    whole schema; these lines are what a user needs to fix a typo."""
    problems = []
    validator = jsonschema.Draft202012Validator(schema, registry=SCHEMA_FILES)
    for error in sorted(
        validator.iter_errors(data), key=lambda e: list(e.absolute_path)
    ):
        at = ".".join([where, *map(str, error.absolute_path)]).strip(".") or "config"
        if error.validator == "additionalProperties":
            known = sorted(
                error.schema["properties"] if "properties" in error.schema else []
            )
            for key in sorted(set(error.instance) - set(known)):
                near = difflib.get_close_matches(str(key), known, n=1)
                hint = f"; did you mean '{near[0]}'?" if near else ""
                problems.append(
                    f"{at}: unknown key '{key}'{hint} (valid keys: {', '.join(known)})"
                )
        else:
            message = (
                error.message
                if len(error.message) <= 160
                else error.message[:157] + "..."
            )
            problems.append(f"{at}: {message}")
    return problems


def validate(data, schema):
    """Snakemake's validate (which also fills in the schema's defaults), after a check whose
    errors name the key, where it is and the nearest valid key, in a few lines."""
    where = next((key for key, value in config.items() if value is data), "")
    problems = config_problems(
        data, read_yaml((SCHEMAS / Path(schema).name).read_text()), where
    )
    if problems:
        shown = problems[:8] + (
            [f"... and {len(problems) - 8} more"] if len(problems) > 8 else []
        )
        raise WorkflowError("invalid configuration:\n  " + "\n  ".join(shown))
    snakemake_validate(data, schema=schema)


validate(config, schema="../schemas/config.schema.yaml")


def mirror_folders(mirror):
    """`data.mirror` (none, one folder or a list) as the absolute paths of the folders that
    exist. Fetch jobs read it from the environment (EMBEDLAB_MIRRORS), not as a parameter:
    a raw file's identity is its sha256, so adding or moving a mirror reruns nothing."""
    folders = [] if mirror is None else [mirror] if isinstance(mirror, str) else mirror
    return [str(Path(m).resolve()) for m in folders if Path(m).is_dir()]


MIRRORS = mirror_folders(config["data"]["mirror"])
# jobs inherit the workflow's environment: the fetch steps read the mirrors there (the
# workflow sets the variable, so it asserts nothing with `envvars:`)
os.environ.update(EMBEDLAB_MIRRORS=os.pathsep.join(MIRRORS))


def _load_codeprint():
    """embedlab/codeprint.py, loaded as a file: the package itself is not imported here."""
    spec = importlib.util.spec_from_file_location(
        "embedlab_codeprint", SRC / "embedlab" / "codeprint.py"
    )
    codeprint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(codeprint)
    # the fingerprints are kept beside the package's compiled files, named by the hash of its
    # sources (codeprint.py: an edit anywhere computes them afresh)
    return codeprint.CodePrints(SRC, cache=SRC / "embedlab" / "__pycache__")


CODEPRINTS = _load_codeprint()

# The one script that runs every step, relative to the rule files. It calls
# embedlab.steps.run_rule with the job (params.step, params.settings, named inputs/outputs).
STEP_SCRIPT = "../scripts/step.py"


def step_code(step, *modules):
    """Fingerprint of the code that running workflow step `step` (`"ee.sweep"`) runs: the
    runner, the step function and what they reach (and `modules`, loaded by computed name).
    A rule passes it as `params.code`, so an edit to that code, and to no other, makes the
    rule's jobs out of date."""
    return CODEPRINTS.of_step(step, *modules)


def step_params(step, *modules, settings=None):
    """The `params` that run workflow step `step` (`"ee.sweep"`) from its rule: the step,
    the fingerprint of its code (`step_code`, with `modules` loaded by computed name; a
    module may be a function of the wildcards) and its settings (`step_settings(...)`, or a
    function of the wildcards; none: `{}`)."""
    if any(callable(module) for module in modules):
        code = lambda wc: step_code(
            step, *(m(wc) if callable(m) else m for m in modules)
        )
    else:
        code = step_code(step, *modules)
    return dict(step=step, code=code, settings={} if settings is None else settings)


def step_settings(step, dataset=None, **derived):
    """The settings that step `step` reads, for its rule's `params.settings`: of the config
    section its settings class names (its paper's by default), the value of each field, a
    per-dataset value (a mapping with key `default`) resolved for `dataset`; the class's
    derived fields from `derived`. Only what the step reads, so a changed setting reruns
    exactly its jobs (embedlab/settings.py)."""
    where, fields, derived_fields = CODEPRINTS.settings_spec(step)
    section = config
    for key in where.split(".") if fields else ():
        section = section[key]
    missing = [name for name in fields if name not in section]
    if missing or sorted(derived) != sorted(derived_fields):
        raise WorkflowError(
            f"step {step}: its settings read {where}: {fields}, derived {derived_fields}; "
            f"the config lacks {missing}, the rule derives {sorted(derived)}"
        )
    settings = {}
    for name in fields:
        value = section[name]
        if isinstance(value, dict) and "default" in value:
            if dataset is None:
                raise WorkflowError(
                    f"step {step}: {where}.{name} is per dataset, the rule names no dataset"
                )
            value = per_dataset(value, dataset)
        settings[name] = value
    return {**settings, **derived}


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
        registry = read_yaml(fh)
    validate(registry, schema="../schemas/datasets.schema.yaml")
    return registry


REGISTRY_PATH = config["data"]["registry"]
REGISTRY = load_registry(REGISTRY_PATH)
RAW_DIR = config["data"]["raw_dir"]


def load_own_datasets(entries):
    """The `own_datasets:` entries of the config, checked (embedlab/datasets/own.py) before any
    job runs; a name the registry has already is refused."""
    if not entries:
        return {}
    sys.path.insert(0, str(SRC))
    from embedlab.datasets import own

    problems = [
        p for name, entry in entries.items() for p in own.entry_problems(name, entry)
    ]
    problems += [
        f"own_datasets.{name}: the registry {REGISTRY_PATH} has a dataset of that name"
        for name in entries
        if name in REGISTRY["datasets"]
    ]
    if problems:
        raise WorkflowError("invalid own_datasets:\n  " + "\n  ".join(problems))
    return {name: own.check_entry(name, entry) for name, entry in entries.items()}


OWN_DATASETS = load_own_datasets(config["own_datasets"])
KINDS = {
    **{name: spec["kind"] for name, spec in REGISTRY["datasets"].items()},
    **{name: entry["kind"] for name, entry in OWN_DATASETS.items()},
}


def check_dataset_names(names, where):
    """Raise naming `where` and the valid names if a name in `names` is no dataset."""
    unknown = [n for n in names if n not in KINDS]
    if unknown:
        raise WorkflowError(
            f"{where} names unknown dataset(s) {unknown}; the datasets are the registry's "
            f"({REGISTRY_PATH}): {', '.join(REGISTRY['datasets'])}"
            + (
                f"; and your own_datasets: {', '.join(OWN_DATASETS)}"
                if OWN_DATASETS
                else ""
            )
        )


def selected_datasets():
    """Names of the dataset artifacts this run builds: `datasets.build` (all = the
    registry's), then every own dataset."""
    build = config["datasets"]["build"]
    names = list(REGISTRY["datasets"]) if build == "all" else list(build)
    check_dataset_names(names, "config datasets.build")
    return names + [n for n in OWN_DATASETS if n not in names]


# own dataset -> {paper: "" where the paper runs it, else why it leaves it out}, for the
# dataset summary's notes
OWN_PLACES = {name: {} for name in OWN_DATASETS}


def left_out_reasons(paper):
    """{own dataset: why `paper` leaves it out}, for its table's notes ({} for none)."""
    return {
        name: places[paper]
        for name, places in sorted(OWN_PLACES.items())
        if paper in places and places[paper]
    }


@functools.cache
def own_facts(name):
    """own.entry_facts of own dataset `name` (its item count; a long co-occurrence table's
    rows, columns and periods), read once however many papers ask."""
    from embedlab.datasets import own

    return own.entry_facts(OWN_DATASETS[name])


def with_own_datasets(paper, names, perplexity=None, val_steps=None):
    """A paper's datasets `names` (checked), then the own datasets of the paper's kind that
    it can use and its section takes (`<paper>.own_datasets`: all, none or a list of names);
    those of its kind that it cannot use are recorded in OWN_PLACES with the reason.
    `perplexity(name)`: the perplexity the paper builds a P of a vectors dataset with (it
    needs more points than that); `val_steps`: D-CODE's validation periods (it needs more
    periods than that)."""
    check_dataset_names(names, f"config {paper}.datasets")
    wanted = config[paper]["own_datasets"]
    if isinstance(wanted, list):
        check_dataset_names(wanted, f"config {paper}.own_datasets")
        unknown = [n for n in wanted if n not in OWN_DATASETS]
        if unknown:
            raise WorkflowError(
                f"config {paper}.own_datasets: {unknown} are not own_datasets"
            )
    chosen = (
        list(OWN_DATASETS) if wanted == "all" else [] if wanted == "none" else wanted
    )
    if not chosen:
        return list(names)
    from embedlab.datasets import own_papers

    usable = []
    for name in chosen:
        entry = OWN_DATASETS[name]
        if not own_papers.PAPER_NEEDS[paper].takes(entry["kind"]):
            continue  # another kind's paper: nothing to report
        why = own_papers.paper_problems(
            paper,
            entry["kind"],
            **own_facts(name),
            has_labels="labels" in entry,
            perplexity=None if perplexity is None else perplexity(name),
            val_steps=val_steps,
        )
        OWN_PLACES[name][paper] = "; ".join(why)
        if not why and name not in names:
            usable.append(name)
    return list(names) + usable


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


def own_raw(name):
    """The raw file of own dataset `name`: its local `path`, or the verified cache of its url
    (rule fetch_own_dataset)."""
    entry = OWN_DATASETS[name]
    if "path" in entry:
        return entry["path"]
    return f"{RAW_DIR}/own/{name}/{Path(entry['url'].split('?')[0]).name or 'data'}"


def own_inputs(wildcards):
    """Files a build of own dataset `wildcards.dataset` reads: its raw file and, for triplets,
    its labels file."""
    entry = OWN_DATASETS[wildcards.dataset]
    labels = (
        [entry["labels"]] if entry["format"] == "triplets" and "labels" in entry else []
    )
    return {"raw": own_raw(wildcards.dataset), "labels": labels}


# final outputs of each paper (the default target asks for them all); each paper's .smk,
# included when the config has its section, adds its own entry PAPER_TARGETS["<section>"]
PAPER_TARGETS = {}


def paper_targets():
    return [t for targets in PAPER_TARGETS.values() for t in targets]


# the tables the report shows, in the order their rules declare them (report_table)
REPORT_TABLES = []


def report_table(path, caption, category, labels, **wildcard_constraints):
    """Table `path`, a rule's CSV output (returned as it is: the CSV stays a plain file in
    results/tables/, which the docs and the comparisons of two runs read), for the HTML
    report. The report offers a CSV only as a download and shows an HTML file inline, so
    report.smk renders the table as a page, results/report/<name>.html, marked for the
    report with `caption`, `category` and `labels` as report() takes them.
    `wildcard_constraints`: those of the rule where two tables' names could match one
    pattern (the page's rule needs them to tell the tables apart)."""
    REPORT_TABLES.append(
        dict(
            csv=path,
            caption=caption,
            category=category,
            labels=labels,
            constraints=wildcard_constraints,
        )
    )
    return path


# A table's page in the report: results/tables/<name>.csv -> results/report/<name>.html
TABLE_CSV = re.compile(r"results/tables/(?P<name>[^/]+)\.csv")
PAGE = "results/report/{}.html"


def page_of(table):
    """The report's page of table `table` (results/tables/<name>.csv)."""
    found = TABLE_CSV.fullmatch(table)
    if found is None:
        raise WorkflowError(f"{table}: a table is results/tables/<name>.csv")
    return PAGE.format(found["name"])


def report_pages(targets):
    """The page of each table among `targets`: every table must be declared for the report
    (report_table), so none is left out of it."""
    tables = [t for t in targets if TABLE_CSV.fullmatch(t)]
    patterns = [
        re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(t["csv"])))
        for t in REPORT_TABLES
    ]
    unknown = [t for t in tables if not any(p.fullmatch(t) for p in patterns)]
    if unknown:
        raise WorkflowError(
            f"tables {unknown} are not declared for the report: write the rule's output "
            "as report_table(path, caption=..., category=..., labels=...) (common.smk)"
        )
    return [page_of(t) for t in tables]


def page_settings(table):
    """The settings of the page job of a declared table: its title, "<category>: <label>"
    with the job's wildcards filled in."""
    label = next(iter(table["labels"].values()))
    return lambda wc: step_settings(
        "report.page", title=f"{table['category']}: {label.format(**dict(wc.items()))}"
    )


def page_rule(table):
    """<name>_page, the name of the page rule of a declared table; a name with wildcards
    (`{prefix}_{dataset}`) comes after its category's (tste_prefix_dataset_page)."""
    name = TABLE_CSV.fullmatch(table["csv"])["name"]
    words = re.sub(r"\W+", "_", re.sub(r"[{}]", "", name)).strip("_")
    if "{" in name:
        words = f'{re.sub(r"[^a-z0-9]", "", table["category"].lower())}_{words}'
    return f"{words}_page"
