"""The Snakemake workflow: lint, config schema, dry-run of the default target, a tiny real run."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

from embedlab import timings

from .conftest import REPO
from .helpers import snakemake


def test_lint_is_clean():
    proc = snakemake("--lint")
    out = proc.stdout + proc.stderr
    assert "Lints for" not in out, out
    assert "Congratulations" in out


def test_snakefiles_are_formatted():
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    snakefmt = Path(sys.executable).parent / "snakefmt"
    proc = subprocess.run(
        [str(snakefmt), "--check", *map(str, files)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _planned_jobs(out: str) -> dict[str, int]:
    """The job-count table that a dry run prints."""
    jobs, in_table = {}, False
    for line in out.splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            in_table = True
        elif in_table and len(parts) == 2 and parts[1].isdigit():
            jobs[parts[0]] = int(parts[1])
        elif in_table and parts and parts[0] == "total":
            break
    return jobs


RULE_FILES = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
# `x.get(key, default)`, `config.get(...)`, `getattr(x, name, default)`: a default written in a
# rule file instead of the schema (where Snakemake's validation fills it in)
FALLBACK = re.compile(r"\.get\(|\bgetattr\(|\bsetdefault\(")


def test_rule_files_read_config_without_fallbacks():
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in RULE_FILES
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if FALLBACK.search(line)
    ]
    assert not found, "defaults belong in workflow/schemas/*.yaml:\n" + "\n".join(found)


def test_every_rule_has_a_log_and_a_benchmark():
    for path in RULE_FILES[1:]:  # the Snakefile holds only `rule all`, which runs nothing
        text = path.read_text()
        # a rule, or one made from another (`use rule a as b with:`, its own log and benchmark)
        rules = re.findall(r"^(?:use )?rule (?:\w+ as )?(\w+)(?: with)?:", text, flags=re.M)
        pattern = r'^    benchmark:\n        "logs/benchmarks/(\w+)/'
        benchmarks = re.findall(pattern, text, flags=re.M)
        assert benchmarks == rules, f"{path.name}: rules {rules}, benchmarks {benchmarks}"
        assert text.count("\n    log:\n") == len(rules), path.name


def test_the_fallback_check_catches_a_fallback():
    assert FALLBACK.search('seed=SNEST.get("seed", 0),')
    assert FALLBACK.search('max_iter=config.get("snest", {})["max_iter"],')
    assert not FALLBACK.search('seed=SNEST["seed"],')


def test_each_paper_owns_its_section():
    """Every paper's section has its own schema, validated in its own rule file; the shared
    files name no paper's section."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    papers = [p for p in schema["properties"] if p not in ("data", "datasets", "own_datasets")]
    assert sorted(papers) == ["dcode", "diffeomap", "ee", "scale", "snest", "tste"]
    for paper in papers:
        rules = (REPO / "workflow" / "rules" / f"{paper}.smk").read_text()
        assert f'validate(config["{paper}"], schema="../schemas/{paper}.schema.yaml")' in rules
        assert (REPO / "workflow" / "schemas" / f"{paper}.schema.yaml").is_file()
    shared = (REPO / "workflow" / "rules" / "common.smk").read_text()
    shared += (REPO / "workflow" / "rules" / "report.smk").read_text()
    for paper in papers:
        assert f'config["{paper}"]' not in shared


def test_a_python_without_the_dependencies_is_refused_before_any_job(tmp_path):
    """`python` on PATH without site-packages (as a system python would be): the workflow
    stops at parse time naming that python and what it lacks."""
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    fake.chmod(0o755)
    proc = snakemake("--dry-run", "--nolock", check=False, path_first=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert str(fake) in out and "numba" in out and "scikit-learn" in out
    assert "snakemake" not in out.split("lacks", 1)[1].split("which", 1)[0]


def test_a_python_without_the_scale_extra_is_refused_where_opentsne_runs(tmp_path):
    """The scale experiment's openTSNE needs the extra `scale`: a `python` without openTSNE
    stops the workflow at parse time, unless the config leaves openTSNE out."""
    (tmp_path / "sitecustomize.py").write_text(
        "import importlib.metadata as m\n"
        "_version = m.version\n"
        "def version(name):\n"
        "    if name.lower() == 'opentsne':\n"
        "        raise m.PackageNotFoundError(name)\n"
        "    return _version(name)\n"
        "m.version = version\n"
    )
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nPYTHONPATH="{tmp_path}" exec "{sys.executable}" "$@"\n')
    fake.chmod(0o755)
    proc = snakemake("--dry-run", "--nolock", check=False, path_first=tmp_path)
    assert proc.returncode != 0
    out = " ".join((proc.stdout + proc.stderr).split())
    assert "lacks openTSNE, which the rules need (extra `scale` of pyproject.toml)" in out
    without = tmp_path / "without.yaml"
    without.write_text(yaml.safe_dump({"scale": {"methods": ["tsne", "snest"]}}))
    snakemake(
        "results/tables/scale.md", "--dry-run", "--nolock",
        "--configfile", "config/config.yaml", str(without), path_first=tmp_path,
    )  # fmt: skip


DEFAULT_CONFIG = "config/config.yaml"  # the Snakefile's `configfile:`


@pytest.fixture(scope="session")
def dry_run(once_per_run):
    """``dry_run(*configfiles)``: stdout of a forced dry run of the default target, with each
    job's shell command, under ``configfiles`` (none or :data:`DEFAULT_CONFIG` alone: no
    ``--configfile``, as a user runs it); run once per configuration in a test run."""

    def run(*configfiles: str) -> str:
        if configfiles in ((), (DEFAULT_CONFIG,)):
            configfiles, extra = (DEFAULT_CONFIG,), ()
        else:
            extra = ("--configfile", *configfiles)

        def make(folder):
            flags = ("--dry-run", "--nolock", "--cores", "2", "--forceall", "--printshellcmds")
            (folder / "stdout").write_text(snakemake(*flags, *extra).stdout)

        name = "dry_run_" + "_".join(Path(c).stem for c in configfiles)
        return (once_per_run(name, make) / "stdout").read_text()

    return run


def test_every_jobs_benchmark_sits_at_its_logs_path(dry_run):
    """A job's benchmark is logs/benchmarks/<rule>/<its log path under logs/>.tsv, so that
    `make timings` finds each job's log (its CPU seconds, embedlab.timings) from the
    benchmark file alone."""
    jobs = timings.parse_dry_run(dry_run())
    timed = jobs[jobs["benchmark"].notna()]
    assert len(timed) > 300
    for job in timed.itertuples():
        rel = Path(job.benchmark).relative_to(Path("logs", "benchmarks", job.rule))
        assert job.log[:1] == [str(Path("logs", rel).with_suffix(".log"))], job


def test_dry_run_of_default_target(registry, dry_run):
    jobs = _planned_jobs(dry_run())
    assert jobs["build_dataset"] == len(registry["datasets"])
    used = {f for spec in registry["datasets"].values() for f in spec.get("files", [])}
    assert jobs["fetch_raw"] == len(used)
    assert jobs["dataset_summary"] == 1


def test_dry_run_of_quick_config(dry_run):
    out = dry_run("config/quick.yaml")
    quick = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
    # the listed datasets, plus any that a paper's quick run needs
    planned = set(re.findall(r"results/datasets/(\w+)/meta\.json", out))
    assert set(quick["datasets"]["build"]) <= planned
    assert _planned_jobs(out)["build_dataset"] == len(planned)


@pytest.mark.parametrize(
    "configfiles",
    [
        [DEFAULT_CONFIG],
        [DEFAULT_CONFIG, "config/quick.yaml"],
        [DEFAULT_CONFIG, "config/paper.yaml"],
    ],
)
def test_every_job_gets_the_settings_its_step_takes(configfiles):
    """Every planned job of the default target: its params.settings build its step's settings
    object (the names and types the step reads), and its named inputs, outputs and wildcards
    are the step's keyword arguments, so no job of a long run fails on them."""
    import inspect

    from embedlab import steps

    from .helpers import planned_jobs

    jobs = planned_jobs(configfiles, ["all"])
    assert len({job["step"] for job in jobs}) > 30
    for job in jobs:
        function = steps.step_function(job["step"])
        where = f"{job['rule']} {job['wildcards']}"
        kind = steps.settings_class(function)
        if kind is None:
            assert job["settings"] == {}, job
            bound = {}
        else:
            bound = {"settings": kind.from_mapping(job["settings"], where=where)}
        try:
            inspect.signature(function).bind(**bound, **dict.fromkeys(job["arguments"]))
        except TypeError as error:
            raise AssertionError(f"{where}: step {job['step']}: {error}") from None


def _folds(folds_used: dict, dataset: str, method: str, n_folds: int) -> int:
    """Folds of (dataset, method) under a folds_used section: a number per dataset or per
    method, else all."""
    limit = folds_used.get(dataset, n_folds)
    return limit.get(method, n_folds) if isinstance(limit, dict) else limit


def _tste_jobs(plan: str, rule: str, **wildcards: str) -> list[dict]:
    """The jobs of ``rule`` in a dry run's ``plan`` whose wildcards include ``wildcards``:
    each its wildcards, inputs and outputs."""
    jobs = []
    for block in re.findall(rf"^rule {rule}:\n(.*?)(?=^\S)", plan + "\nEND", flags=re.M | re.S):
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, flags=re.M))
        job = {
            "wildcards": dict(w.split("=", 1) for w in fields["wildcards"].split(", ")),
            "input": fields.get("input", "").split(", "),
            "output": fields["output"].split(", "),
        }
        if wildcards.items() <= job["wildcards"].items():
            jobs.append(job)
    return jobs


def test_folds_used_reaches_only_its_dataset_and_methods(tmp_path, dry_run):
    """tste.folds_used limits the configured (dataset, method) jobs only: the default config
    evaluates the first 3 folds of MNIST and 5 of music (every method), a per-method entry
    replaces the dataset's number, and config/paper.yaml restores all 10 folds. Each fold is
    a job (tste_part) after one validation job per grid value (tste_search), and the merge
    reads exactly the folds used. (The default and the paper's plans are the shared dry runs
    of the default target; the STE-K jobs are read from them.)"""
    targets = [f"results/metrics/tste/{d}/STE-K.csv" for d in ("mnist_triplets_1k", "music")]

    def grids(*configfiles):
        """Each dataset's STE-K grid: its grids_by_dataset entry, else the method's."""
        tste = {}
        for configfile in configfiles:
            for key, value in yaml.safe_load((REPO / configfile).read_text())["tste"].items():
                tste[key] = {**tste.get(key, {}), **value} if isinstance(value, dict) else value
        by = tste["grids_by_dataset"]
        return {d: by[d]["STE-K"] if d in by else tste["grids"]["STE-K"] for d in by}

    def folds(plan: str, grids: dict):
        out = {}
        for d in ("mnist_triplets_1k", "music"):
            job = {"reading": "tste", "dataset": d, "method": "STE-K"}
            parts = _tste_jobs(plan, "tste_part", **job)
            search = _tste_jobs(plan, "tste_search", **job)
            (merge,) = _tste_jobs(plan, "tste_authors_merge", **job)
            assert len(search) == len(next(iter(grids[d].values())))
            files = [f"results/metrics/tste/{d}/STE-K/search/{k}.npz" for k in range(len(search))]
            assert all([f for f in p["input"] if "/search/" in f] == files for p in parts)
            assert sorted(merge["input"]) == sorted(p["output"][0] for p in parts)
            out[d] = sorted(int(p["wildcards"]["part"].removeprefix("fold")) for p in parts)
        return out

    # the default validates the values chosen, config/paper.yaml the whole grid
    default, whole = grids(DEFAULT_CONFIG), grids(DEFAULT_CONFIG, "config/paper.yaml")
    assert default == {d: {"lam": [1.0]} for d in default}
    assert whole == {d: {"lam": [0.0, 0.1, 1.0]} for d in default}
    assert folds(dry_run(), default) == {
        "mnist_triplets_1k": list(range(3)), "music": list(range(5)),
    }  # fmt: skip
    paper = folds(dry_run(DEFAULT_CONFIG, "config/paper.yaml"), whole)
    assert paper == {"mnist_triplets_1k": list(range(10)), "music": list(range(10))}
    override = tmp_path / "folds.yaml"
    override.write_text(
        yaml.safe_dump({"tste": {"folds_used": {"mnist_triplets_1k": {"STE-K": 4}}}})
    )
    flags = ("--dry-run", "--nolock", "--forceall")
    plan = snakemake(*targets, *flags, "--configfile", DEFAULT_CONFIG, str(override)).stdout
    limited = folds(plan, default)
    assert limited == {"mnist_triplets_1k": [0, 1, 2, 3], "music": list(range(5))}


@pytest.mark.parametrize("configfile", [DEFAULT_CONFIG, "config/quick.yaml"])
def test_tste_runs_both_protocols(configfile, dry_run):
    """The default and the quick configuration run the paper-text and the authors' protocol:
    both claims tables and Fig. 2s, the authors' Fig. 3; the authors' part jobs read their
    grid's search files (the settings each job gets: tests/test_workflow_tste.py)."""
    cfg = yaml.safe_load((REPO / configfile).read_text())["tste"]
    assert cfg["protocols"] == ["paper_text", "authors_code", "authors_figure"]
    targets = [
        "results/tables/tste_claims.csv",
        "results/tables/tste_authors_claims.csv",
        "results/tables/tste_authors_figure_claims.csv",
        "results/figures/tste_authors_figure_fig2.png",
        "results/figures/tste_fig2.png",
        "results/figures/tste_authors_fig2.png",
        "results/figures/tste_authors_fig3.png",
    ]
    out = dry_run(configfile)
    for t in targets:
        assert t in out, t
    authors = cfg["authors_code"]
    merges = _tste_jobs(out, "tste_authors_merge", reading="tste_authors")
    expected = sum(
        len(authors.get("methods_by_dataset", {}).get(d, authors["methods"]))
        for d in authors["datasets"]
    )
    assert len(merges) == expected
    parts = _tste_jobs(out, "tste_authors_part", reading="tste_authors")
    n_folds = authors.get("n_folds", 10)
    folds_used = authors.get("folds_used", {})
    assert len(parts) == sum(
        1 + _folds(folds_used, d, m, n_folds)
        for d in authors["datasets"]
        for m in authors.get("methods_by_dataset", {}).get(d, authors["methods"])
    )
    grid = authors["grids"]["music"]["GNMDS-K"]["mu"]
    music = {"reading": "tste_authors", "dataset": "music", "method": "GNMDS-K"}
    assert len(_tste_jobs(out, "tste_authors_search", **music)) == len(grid)
    for part in _tste_jobs(out, "tste_authors_part", **music):
        assert len([f for f in part["input"] if "/search/" in f]) == len(grid)
    assert "mnist_triplets_1k_authors" in out
    fig3 = authors["maps"]["fig3"]
    maps = _tste_jobs(out, "tste_map", maps="tste", dataset=fig3["dataset"])
    assert sorted(m["wildcards"]["method"] for m in maps) == sorted(fig3["methods"])


def test_authors_folds_used_reaches_only_its_dataset_and_method(tmp_path):
    """The authors' protocol: the default evaluates the first 3 folds of MNIST's methods and 5
    of music's; a per-method entry replaces the dataset's number (the other methods get all
    folds)."""
    targets = [
        f"results/metrics/tste_authors/{d}/{m}.csv"
        for d in ("mnist_triplets_1k_authors", "music")
        for m in ("STE-K", "STE-X")
    ]

    def parts_per_job(*configfiles):
        proc = snakemake(
            *targets, "--dry-run", "--nolock", "--forceall",
            "--configfile", "config/config.yaml", *configfiles,
        )  # fmt: skip
        per_job = {}
        for part in _tste_jobs(proc.stdout, "tste_authors_part"):
            key = (part["wildcards"]["dataset"], part["wildcards"]["method"])
            per_job[key] = per_job.get(key, 0) + 1
        return per_job

    n_folds = 10
    assert parts_per_job() == {
        ("mnist_triplets_1k_authors", "STE-K"): 1 + 3,
        ("mnist_triplets_1k_authors", "STE-X"): 1 + 3,
        ("music", "STE-K"): 1 + 5,
        ("music", "STE-X"): 1 + 5,
    }
    override = tmp_path / "folds.yaml"
    folds = {"mnist_triplets_1k_authors": {"STE-K": 2}}
    override.write_text(yaml.safe_dump({"tste": {"authors_code": {"folds_used": folds}}}))
    assert parts_per_job(str(override)) == {
        ("mnist_triplets_1k_authors", "STE-K"): 1 + 2,  # the 1-NN part and two folds
        ("mnist_triplets_1k_authors", "STE-X"): 1 + n_folds,
        ("music", "STE-K"): 1 + 5,
        ("music", "STE-X"): 1 + 5,
    }


@pytest.mark.parametrize(
    "bad, expected",
    [
        ({"datasets": {"build": 5}}, "build"),
        ({"tste": {"protocols": ["paper_text", "authors_kode"]}}, "authors_kode"),
        (
            {"tste": {"authors_code": {"grids": {"music": {"STE-K": {"lam": [1.5]}}}}}},
            "1.5",
        ),
        ({"datasets": {"build": ["school"], "bogus_key": 1}}, "bogus_key"),
        ({"data": {"registry": 7}}, "registry"),
        ({"dataz": {}}, "dataz"),
        ({"datasets": {"build": ["no_such_dataset"]}}, "no_such_dataset"),
        ({"tste": {"folds_used": {"music": {"PCA-K": 1}}}}, "PCA-K"),
        ({"tste": {"folds_used": {"music": 11}}}, "folds_used of music"),
    ],
)
def test_malformed_config_is_rejected_naming_the_field(tmp_path, bad, expected):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump(bad))
    proc = snakemake("--dry-run", "--nolock", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0
    assert expected in proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------
# a tiny end-to-end run in a temporary working directory, with its own registry and mirror

# SNAP format with CRLF: edges listed both ways, a self-loop on 3, node 9 with only a self-loop
TINY_EDGES = "".join(
    f"{line}\r\n"
    for line in ["# tiny collaboration graph", "# FromNodeId\tToNodeId"]
    + ["1\t2", "2\t1", "2\t3", "3\t2", "3\t3", "1\t3", "3\t1", "9\t9"]
)


def _tiny_workdir(tmp_path: Path, edges: str = TINY_EDGES) -> Path:
    work = tmp_path / "work"
    mirror = tmp_path / "mirror"
    (mirror / "tiny").mkdir(parents=True)
    (work / "config").mkdir(parents=True)
    (mirror / "tiny" / "edges.txt").write_text(edges, newline="")
    sha = hashlib.sha256(TINY_EDGES.encode()).hexdigest()
    registry = {
        "files": {"tiny/edges.txt": {"url": "https://example.invalid/edges.txt", "sha256": sha}},
        "datasets": {
            "school": {
                "kind": "similarity",
                "builder": "school.build",
                "params": {"n_students": 6, "ring_neighbours": 1},
                "paper": {"n": 14},
            },
            "tiny_graph": {
                "kind": "similarity",
                "builder": "coauthor.build_grqc",
                "files": ["tiny/edges.txt"],
                "paper": {"n": 3},
            },
        },
    }
    (work / "config" / "datasets.yaml").write_text(yaml.safe_dump(registry))
    config = textwrap.dedent(
        f"""\
        data:
          registry: config/datasets.yaml
          mirror: {mirror}
          raw_dir: resources/raw
          offline: true
        datasets:
          build: all
        """
    )
    (work / "config" / "config.yaml").write_text(config)
    return work


def test_tiny_end_to_end_run(tmp_path, tiny_run):
    work = tiny_run(tmp_path)
    table = pd.read_csv(work / "results" / "tables" / "datasets.csv")
    rows = table.set_index("dataset")
    assert rows.loc["school", "n"] == 14 == rows.loc["school", "paper_n"]
    assert rows.loc["tiny_graph", "n"] == 3  # node 9 has only a self-loop: dropped
    meta = json.loads((work / "results" / "datasets" / "tiny_graph" / "meta.json").read_text())
    assert meta["summary"]["nnz"] == 6
    assert (work / "logs" / "datasets" / "tiny_graph.log").exists()
    # a second run has nothing to do
    again = snakemake("--cores", "2", "--directory", str(work), "--dry-run", cwd=work)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_checksum_mismatch_fails_without_output(tmp_path):
    work = _tiny_workdir(tmp_path, edges=TINY_EDGES.replace("2\t3", "2\t4"))
    proc = snakemake("--cores", "1", "--directory", str(work), cwd=work, check=False)
    assert proc.returncode != 0
    log = (work / "logs" / "fetch" / "tiny" / "edges.txt.log").read_text()
    assert "checksum mismatch for raw file 'tiny/edges.txt" in log
    assert hashlib.sha256(TINY_EDGES.encode()).hexdigest() in log
    assert not (work / "resources" / "raw" / "tiny" / "edges.txt").exists()
    assert not (work / "results" / "datasets" / "tiny_graph" / "meta.json").exists()


@pytest.mark.slow
def test_interrupted_run_resumes_without_redoing_finished_jobs(tmp_path):
    """Kill a run (SIGTERM, as `kill` or a scheduler does) after its first finished job: the
    restart plans only the unfinished jobs and leaves the finished outputs untouched."""
    import signal
    import time

    work = _tiny_workdir(tmp_path)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
    run = subprocess.Popen(
        [*cmd, "--cores", "1", "--directory", str(work)],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    metas = {n: work / "results" / "datasets" / n / "meta.json" for n in ("school", "tiny_graph")}
    deadline = time.monotonic() + 300
    while not any(m.exists() for m in metas.values()) and run.poll() is None:
        assert time.monotonic() < deadline, "no job finished in 300 s"
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    run.wait(timeout=120)
    finished = {n: m.stat().st_mtime_ns for n, m in metas.items() if m.exists()}
    assert finished, "the run was killed before any job finished"
    summary = work / "results" / "tables" / "datasets.csv"
    assert not summary.exists(), "the run finished before it could be killed"

    plan = snakemake("--cores", "1", "--directory", str(work), "--dry-run", cwd=work).stdout
    outputs = re.findall(r"^\s*output: (.*)$", plan, flags=re.M)
    for name in finished:
        assert not any(f"results/datasets/{name}/" in o for o in outputs), f"{name} rebuilt"
    assert _planned_jobs(plan).get("build_dataset", 0) == len(metas) - len(finished)
    assert any("results/tables/datasets.csv" in o for o in outputs)

    snakemake("--cores", "1", "--directory", str(work), cwd=work)
    assert summary.exists()
    assert {n: metas[n].stat().st_mtime_ns for n in finished} == finished


def test_snest_jobs_take_their_datasets_threads(dry_run):
    """snest.threads: one-thread Table 1 jobs for the small datasets, the default (2) for
    the others (a dry run names a job's threads where they are more than one; the runner
    sets NUMBA_NUM_THREADS to them)."""
    config = yaml.safe_load((REPO / DEFAULT_CONFIG).read_text())["snest"]
    jobs = re.findall(r"^rule snest_embed:\n(.*?)(?=^\S)", dry_run() + "\nEND", flags=re.M | re.S)
    threads = {}
    for job in jobs:
        dataset = re.search(r"wildcards: dataset=(\w+), cell=", job)[1]
        reserved = re.search(r"^    threads: (\d+)$", job, flags=re.M)
        threads.setdefault(dataset, set()).add(int(reserved[1]) if reserved else 1)
    assert set(threads) == set(config["datasets"])
    assert len(jobs) == len(config["cells"]) * len(threads)
    for dataset, t in threads.items():
        assert t == {config["threads"].get(dataset, config["threads"]["default"])}, dataset
    assert threads["nips17"] == {1} and threads["w5000"] == {2}
