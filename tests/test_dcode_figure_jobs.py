"""D-CODE's figures are drawn in jobs of their own: an edit to a plot reruns only the drawing
jobs, an edit to a figure's computation reruns its job and then its drawing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from .conftest import REPO
from .helpers import snakemake
from .test_codeprint import SRC, _edit_function, _workflow_copy, changed_steps, copy_src

PLOTS = Path("embedlab") / "plots" / "dcode.py"
DCODE = Path("embedlab") / "experiments" / "dcode"
#: the steps that fit and write a figure's data file, and those that draw such a file
COMPUTE = {"dcode.synthetic", "dcode.embedding", "dcode.own_map", "dcode.pairs"}
DRAW = {
    "dcode.synthetic_figure",
    "dcode.embedding_figure",
    "dcode.own_map_figure",
    "dcode.pairs_figure",
}


@pytest.mark.parametrize(
    ("path", "function", "expected"),
    [
        (PLOTS, "synthetic_figure", {"dcode.synthetic_figure"}),
        (PLOTS, "nips_figure", {"dcode.embedding_figure", "dcode.own_map_figure"}),
        (PLOTS, "pairs_figure", {"dcode.pairs_figure"}),
        (DCODE / "steps.py", "_load_drawing", DRAW),
    ],
)
def test_a_drawing_edit_reruns_only_the_drawing_jobs(tmp_path, path, function, expected):
    src = copy_src(tmp_path)
    _edit_function(src / path, function)
    assert changed_steps(SRC, src) == expected


@pytest.mark.parametrize(
    ("path", "function", "expected"),
    [
        (DCODE / "figures.py", "synthetic_ranks", {"dcode.synthetic"}),
        (DCODE / "figures.py", "last_volume_embedding", {"dcode.embedding", "dcode.own_map"}),
        (DCODE / "figures.py", "pair_trajectories", {"dcode.pairs"}),
        (DCODE / "own.py", "last_period_map", {"dcode.own_map"}),
        (DCODE / "steps.py", "_save_drawing", COMPUTE),
    ],
)
def test_a_computation_edit_reruns_its_job_and_no_drawing_job(tmp_path, path, function, expected):
    """The drawing job reruns after its computation all the same: the data file it reads is
    rewritten (the workflow test below)."""
    src = copy_src(tmp_path)
    _edit_function(src / path, function)
    assert changed_steps(SRC, src) == expected


def test_a_model_edit_reaches_every_figure_fit_and_no_drawing(tmp_path):
    src = copy_src(tmp_path)
    _edit_function(src / "embedlab" / "methods" / "dcode_kalman.py", "entity_blocks")
    changed = changed_steps(SRC, src)
    assert COMPUTE <= changed
    assert not changed & DRAW


def _planned_rules(repo: Path, work: Path, *extra: str) -> set[str]:
    """The rules Snakemake runs (or, with ``--dry-run``, would run) to make Fig. 3."""
    proc = snakemake(
        "--snakefile", str(repo / "Snakefile"), "--directory", str(work), "--cores", "2",
        "results/figures/dcode_fig3.png", *extra, cwd=work,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    if "Nothing to be done" in out:
        return set()
    return set(re.findall(r"^(?:localrule|rule) (\w+):", out, re.M))


@pytest.mark.slow
def test_snakemake_redraws_fig3_for_a_plot_edit_and_refits_it_for_a_fit_edit(tmp_path):
    repo, work = _workflow_copy(tmp_path)
    config_path = work / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    quick = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())["dcode"]
    short = {"n_steps": 30, "change_start": 10, "change_end": 20}
    config["datasets"] = {"build": ["dcode_synthetic"], "overrides": {"dcode_synthetic": short}}
    fig3 = {"params": quick["figures"]["fig3"]["params"], "epochs": [5, 15, 25]}
    config["dcode"] = {**quick, "figures": {"fig3": fig3}}
    config_path.write_text(yaml.safe_dump(config))
    assert {"dcode_fig3", "dcode_fig3_figure"} <= _planned_rules(repo, work)
    assert _planned_rules(repo, work, "--dry-run") == set()

    pkg = repo / "src"
    _edit_function(pkg / PLOTS, "synthetic_figure")
    assert _planned_rules(repo, work, "--dry-run") == {"dcode_fig3_figure"}
    _edit_function(pkg / DCODE / "figures.py", "synthetic_ranks")
    assert _planned_rules(repo, work, "--dry-run") == {"dcode_fig3", "dcode_fig3_figure"}
