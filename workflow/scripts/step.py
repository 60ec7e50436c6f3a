"""Runs the step a rule names (`params.step`) with its settings (`params.settings`), its named
inputs and outputs and its wildcards: `embedlab.steps.run_rule` (the one runner of every rule).

The workflow's own `src/` comes first on the path, so the job runs this checkout's code, the
code its fingerprint (`params.code`) was taken from, wherever the package is installed."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from embedlab.steps import run_rule  # noqa: E402

sys.exit(run_rule(snakemake))
