"""What the workflow hands a rule's jobs, evaluated by Snakemake on the real workflow: a dry
run prints no step's settings (they are ``params.settings``, not a command line), so the
benchmarks that rerun the workflow's own jobs, and the tests of what reaches a step, read them
here (this folder is on sys.path when the scripts run)."""

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


def job_settings(
    configfiles: list[str], rule: str, jobs: list[dict[str, str]]
) -> tuple[dict, list[dict]]:
    """(the workflow's config under ``configfiles``, validated with its defaults, the
    ``params.settings`` of ``rule``'s job for each wildcards of ``jobs``); ``configfiles`` as
    ``snakemake --configfile`` takes them (relative to the repository)."""
    python = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{python}{os.pathsep}{os.environ.get('PATH', '')}")
    argv = [json.dumps([str(c) for c in configfiles]), rule, json.dumps(jobs)]
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    line = next((s for s in done.stdout.splitlines() if s.startswith("JOBS ")), None)
    if line is None:
        raise RuntimeError(f"the workflow's {rule} jobs: {done.stdout}\n{done.stderr}")
    found = json.loads(line.removeprefix("JOBS "))
    return found["config"], found["settings"]
