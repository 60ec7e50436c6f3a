"""What the workflow hands a rule's jobs, evaluated by Snakemake on the real workflow: a dry
run prints no step's settings (they are ``params.settings``, not a command line), so the
benchmarks that rerun the workflow's own jobs, and the tests of what reaches a step, read them
here (this folder is on sys.path when the scripts run).

Both functions load the workflow through Snakemake's Python API in a subprocess; the planned
jobs' parameters are read from its workflow object (``_workflow``), which the public API does
not expose: a Snakemake upgrade may move it, and the tests that use this module say so first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: argv: config files (JSON), a rule, the wildcards of its jobs (JSON); prints one line, the
#: workflow's config (validated, defaults filled) and each job's params.settings, as JSON
_SCRIPT = """
import json, sys
from pathlib import Path
from types import SimpleNamespace

from snakemake.api import SnakemakeApi
from snakemake.settings.types import (
    ConfigSettings, OutputSettings, ResourceSettings, StorageSettings,
)

configfiles, rule, jobs = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
with SnakemakeApi(OutputSettings()) as api:
    workflow = api.workflow(
        resource_settings=ResourceSettings(cores=1),
        config_settings=ConfigSettings(configfiles=[Path(c) for c in configfiles]),
        storage_settings=StorageSettings(),
        snakefile=Path("Snakefile"),
        workdir=Path("."),
    )._workflow
    settings = workflow.get_rule(rule).params["settings"]
    found = [settings(SimpleNamespace(**job)) if callable(settings) else settings for job in jobs]
    print("JOBS " + json.dumps({"config": workflow.config, "settings": found}, default=str))
"""


def _run(script: str, argv: list[str]) -> subprocess.CompletedProcess:
    """``script`` run by this interpreter in the repository, its folder first on PATH (the
    workflow checks that its jobs' ``python`` has the package's dependencies)."""
    python = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{python}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(
        [sys.executable, "-c", script, *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def job_settings(
    configfiles: list[str], rule: str, jobs: list[dict[str, str]]
) -> tuple[dict, list[dict]]:
    """(the workflow's config under ``configfiles``, validated with its defaults, the
    ``params.settings`` of ``rule``'s job for each wildcards of ``jobs``); ``configfiles`` as
    ``snakemake --configfile`` takes them (relative to the repository)."""
    argv = [json.dumps([str(c) for c in configfiles]), rule, json.dumps(jobs)]
    done = _run(_SCRIPT, argv)
    line = next((s for s in done.stdout.splitlines() if s.startswith("JOBS ")), None)
    if line is None:
        raise RuntimeError(f"the workflow's {rule} jobs: {done.stdout}\n{done.stderr}")
    found = json.loads(line.removeprefix("JOBS "))
    return found["config"], found["settings"]


#: argv: config files (JSON), targets (JSON); prints one JSON line per planned job of a step:
#: its rule, wildcards, step, settings and the names of the step's keyword arguments (its named
#: inputs, outputs and wildcards: embedlab.steps.job_arguments) (the whole plan, as
#: ``--forceall`` would run it)
_PLAN = """
import json, sys
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.settings.types import (
    ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings, StorageSettings,
)

configfiles, targets = json.loads(sys.argv[1]), json.loads(sys.argv[2])
with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
    workflow = api.workflow(
        resource_settings=ResourceSettings(cores=2),
        config_settings=ConfigSettings(configfiles=[Path(c) for c in configfiles]),
        storage_settings=StorageSettings(),
        snakefile=Path("Snakefile"),
        workdir=Path("."),
    )
    dag = workflow.dag(dag_settings=DAGSettings(targets=set(targets), forceall=True))
    planned = dag.workflow_api._workflow
    planned._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
    planned._build_dag()
    for job in planned.dag.jobs:
        if "step" in job.params.keys():
            print("JOB " + json.dumps({
                "rule": job.rule.name, "wildcards": dict(job.wildcards.items()),
                "step": job.params.step, "settings": job.params.settings,
                "arguments": [*job.input.keys(), *job.output.keys(), *job.wildcards.keys()],
            }, default=str))
"""


def planned_jobs(configfiles: list[str], targets: list[str]) -> list[dict]:
    """Every job of a step that the workflow plans for ``targets`` under ``configfiles``
    (all of them, as ``--forceall``): {rule, wildcards, step, settings} each."""
    argv = [json.dumps([str(c) for c in configfiles]), json.dumps(list(targets))]
    done = _run(_PLAN, argv)
    if done.returncode:
        raise RuntimeError(f"the workflow's plan for {targets}: {done.stderr[-3000:]}")
    lines = [s.removeprefix("JOB ") for s in done.stdout.splitlines() if s.startswith("JOB ")]
    return [json.loads(line) for line in lines]
