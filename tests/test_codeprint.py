"""Code fingerprints: each rule's `params.code` follows exactly the package code its step runs."""

from __future__ import annotations

import ast
import functools
import re
import shutil
from pathlib import Path

import pytest

from embedlab.codeprint import CodePrints

from .conftest import REPO
from .helpers import snakemake

SRC = REPO / "src"
#: the steps that fit an embedding with the shared optimiser
FIT_STEPS = {"snest.embed", "ee.sweep", "ee.homotopy", "scale.embed"}


def copy_src(tmp_path: Path) -> Path:
    """A copy of src/ (the embedlab package) to edit."""
    dest = tmp_path / "src"
    shutil.copytree(SRC, dest, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


@functools.cache
def _prints_of(src: Path) -> CodePrints:
    """The fingerprints of an unedited tree (the repository's ``src``), computed once per
    test process: each answer is a function of the sources, which the tests do not edit."""
    return CodePrints(src)


def changed_steps(before: Path, after: Path) -> set[str]:
    """The workflow steps (``"ee.sweep"``) whose fingerprint differs between the unedited
    tree ``before`` and the edited copy ``after``."""
    a, b = _prints_of(before), CodePrints(after)
    return {s for s in a.steps() if a.of_step(s) != b.of_step(s)}


def edit_a_body(path: Path) -> None:
    """Add a statement to the body of the first top-level function of ``path`` (before its
    first statement after the docstring): a change to what the code does."""
    lines = path.read_text().splitlines(keepends=True)
    for node in ast.parse("".join(lines)).body:
        if isinstance(node, ast.FunctionDef) and len(node.body) >= 2:
            first = node.body[1] if ast.get_docstring(node) else node.body[0]
            indent = " " * first.col_offset
            lines.insert(first.lineno - 1, f"{indent}_edited = 1\n")
            path.write_text("".join(lines))
            return
    raise AssertionError(f"no function with two statements in {path}")


def test_comments_docstrings_and_layout_change_no_fingerprint(tmp_path):
    src = copy_src(tmp_path)
    plots = src / "embedlab" / "plots" / "snest.py"
    text = plots.read_text()
    text = text.replace('"""', '"""Reworded. ', 1)  # the module docstring
    text = re.sub(r"^(def \w+\(.*)$", r"# a new comment\n\n\1", text, count=3, flags=re.M)
    plots.write_text(text + "\n\n# trailing comment\n")
    edit(src / "embedlab" / "optimize.py", "\ndef ", "\n# tidy\n\n\ndef ")
    assert changed_steps(SRC, src) == set()


def test_a_plot_edit_reaches_only_the_jobs_that_draw_it(tmp_path):
    src = copy_src(tmp_path)
    plots = src / "embedlab" / "plots" / "snest.py"
    edit_a_body(plots)
    changed = changed_steps(SRC, src)
    assert "snest.figure" in changed
    assert not changed & FIT_STEPS, changed
    assert not {v for v in changed if v.startswith(("snest.embed", "snest.table", "dcode"))}


def test_an_optimiser_edit_reaches_every_fit_and_no_dcode_or_diffeomap_job(tmp_path):
    src = copy_src(tmp_path)
    optimize = src / "embedlab" / "optimize.py"
    edit_a_body(optimize)
    changed = changed_steps(SRC, src)
    assert FIT_STEPS <= changed
    assert not {v for v in changed if v.startswith(("dcode.", "diffeomap.", "datasets."))}


def test_a_builder_edit_reaches_only_the_datasets_it_builds(tmp_path):
    src = copy_src(tmp_path)
    synthetic = src / "embedlab" / "datasets" / "synthetic.py"
    edit_a_body(synthetic)
    before, after = CodePrints(SRC), CodePrints(src)
    builds = ("embedlab.datasets.synthetic", "embedlab.datasets.mnist")
    build = "datasets.build"
    assert before.of_step(build, builds[0]) != after.of_step(build, builds[0])
    assert before.of_step(build, builds[1]) == after.of_step(build, builds[1])
    assert before.of_step(build) == after.of_step(build)


# every rule runs a step: its params are `step_params(STEP, ...)` (the step's name, the
# fingerprint of its code and its settings), the settings from `step_settings(STEP, ...)`
RULE = re.compile(r"^rule (\w+):\n(.*?)(?=^\S)", re.M | re.S)


def test_every_rule_runs_a_step_with_its_fingerprint_and_settings():
    checked = 0
    for path in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for name, body in RULE.findall(path.read_text() + "\nEND"):
            where = f"{path.name}: rule {name}"
            if name == "unknown_dataset":
                assert 'shell:\n        "exit 1"' in body, where  # fails while the DAG is built
                continue
            assert "    script:" in body and "STEP_SCRIPT" in body.split("    script:")[-1], where
            params = body.split("    params:")[-1]
            step = re.match(r'\s*\*\*step_params\(\s*"([a-z_]+\.[a-z_0-9]+)"', params)
            assert step, f"{where}: its params are not step_params(STEP, ...)"
            step = step[1]
            if "settings=" in params:
                assert re.search(rf'settings=[^=]*?step_settings\(\s*"{step}"', params), (
                    f"{where}: settings not from step_settings({step!r})"
                )
            checked += 1
    assert checked >= 30


def test_no_step_function_holds_a_local_named_as_a_step():
    """Fingerprints follow names: a local ``table`` in one step would make the ``table`` step's
    code count as its own, and an edit to one would rerun the other's jobs."""
    prints = CodePrints(SRC)
    for module in {prints.step_home(step)[0] for step in prints.steps()}:
        steps = {
            step.partition(".")[2] for step in prints.steps() if prints.step_home(step)[0] == module
        }
        for name in steps:
            node = prints.module(module).defs[name]
            stored = {
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            assert not stored & steps, f"{module}.{name} assigns {sorted(stored & steps)}"


# --- a real run: Snakemake reruns what an edit reaches, and nothing for a comment ---------
def _workflow_copy(tmp_path: Path) -> tuple[Path, Path]:
    """(a copy of the workflow with its own src/, a working directory building one dataset
    that needs no raw file, swissroll (datasets/synthetic.py, the module the test rewords),
    and the summary table)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("Snakefile", "pyproject.toml"):
        shutil.copy(REPO / name, repo / name)
    shutil.copytree(REPO / "workflow", repo / "workflow")
    shutil.copytree(REPO / "config", repo / "config")
    copy_src(repo)
    work = tmp_path / "work"
    (work / "config").mkdir(parents=True)
    (work / "config" / "config.yaml").write_text(
        f"data: {{registry: {repo}/config/datasets.yaml, mirror: {tmp_path}/none,"
        " raw_dir: resources/raw, offline: true}\n"
        "datasets: {build: [swissroll]}\n"
    )
    return repo, work


def _plan(repo: Path, work: Path, *extra: str) -> str:
    proc = snakemake(
        "--snakefile", str(repo / "Snakefile"), "--directory", str(work), "--cores", "2",
        "results/tables/datasets.csv", *extra, cwd=work,
    )  # fmt: skip
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_snakemake_reruns_exactly_what_an_edit_reaches(tmp_path):
    repo, work = _workflow_copy(tmp_path)
    _plan(repo, work)
    assert "Nothing to be done" in _plan(repo, work, "--dry-run")
    # each job ran the workflow's own code (the step script puts its src/ first), not the
    # embedlab this Python has installed
    log = (work / "logs" / "datasets" / "swissroll.log").read_text()
    assert f"step datasets.build, embedlab from {repo / 'src' / 'embedlab'}" in log

    pkg = repo / "src" / "embedlab"
    edit(pkg / "tables.py", "\ndef ", "\n# a comment\n\n\ndef ")
    edit(pkg / "datasets" / "synthetic.py", '"""', '"""Reworded docstring. ')
    assert "Nothing to be done" in _plan(repo, work, "--dry-run")

    edit_a_body(pkg / "tables.py")
    plan = _plan(repo, work, "--dry-run")
    assert re.search(r"^rule dataset_summary:", plan, re.M)
    assert not re.search(r"^rule build_dataset:", plan, re.M)
    assert "params" in plan  # the reason Snakemake gives: the code parameter changed


def test_the_fingerprinting_itself_is_not_fingerprinted(tmp_path):
    src = copy_src(tmp_path)
    edit_a_body(src / "embedlab" / "codeprint.py")
    assert changed_steps(SRC, src) == set()


def _edit_function(path: Path, name: str) -> None:
    """Add a statement at the top of top-level function ``name``'s body."""
    lines = path.read_text().splitlines(keepends=True)
    node = next(n for n in ast.parse("".join(lines)).body if getattr(n, "name", None) == name)
    first = node.body[1] if ast.get_docstring(node) else node.body[0]
    lines.insert(first.lineno - 1, " " * first.col_offset + "_edited = 1\n")
    path.write_text("".join(lines))


def test_a_new_function_that_no_job_calls_reruns_nothing(tmp_path):
    src = copy_src(tmp_path)
    tables = src / "embedlab" / "tables.py"
    tables.write_text(tables.read_text() + "\n\ndef unused_helper(x):\n    return x + 1\n")
    assert changed_steps(SRC, src) == set()


def test_a_function_edit_reaches_only_the_steps_that_call_it(tmp_path):
    src = copy_src(tmp_path)
    _edit_function(src / "embedlab" / "tables.py", "left_out_note")
    changed = changed_steps(SRC, src)
    assert {"snest.table", "ee.table", "diffeomap.table", "tste.claims"} <= changed
    assert not changed & (
        FIT_STEPS | {"datasets.build", "datasets.fetch", "dcode.rank", "tste.fold"}
    )
    src = copy_src(tmp_path / "again")
    _edit_function(src / "embedlab" / "tables.py", "write_csv")
    changed = changed_steps(SRC, src)
    assert {"report.datasets", "report.timings", "tste.fold", "ee.sweep"} <= changed
    assert "datasets.build" not in changed and "datasets.fetch" not in changed


def test_a_steps_code_and_settings_reach_that_step_only(tmp_path):
    """A step's function, its computation and its settings class rerun its jobs and no other
    step's, though one module holds every step of the paper."""
    ee = Path("embedlab") / "experiments" / "ee"
    for path, name, expected in [
        (ee / "steps.py", "table", {"ee.table"}),
        (ee / "sweep.py", "sweep", {"ee.sweep"}),
        (ee / "homotopy.py", "homotopy_comparison", {"ee.homotopy"}),
    ]:
        src = copy_src(tmp_path / name)
        _edit_function(src / path, name)
        assert changed_steps(SRC, src) == expected, name
    src = copy_src(tmp_path / "settings")
    edit(src / ee / "settings.py", "    max_iter: int\n", "    max_iter: int\n    extra: int\n")
    assert changed_steps(SRC, src) == {"ee.sweep"}
    src = copy_src(tmp_path / "runner")
    _edit_function(src / "embedlab" / "steps.py", "run_rule")
    assert changed_steps(SRC, src) == set(CodePrints(SRC).steps())


# --------------------------------------------------------------------------------------
# the kept answers (the workflow's start-up)


def _every_answer(prints: CodePrints) -> dict[str, object]:
    steps = prints.steps()
    return {
        **{f"print {s}": prints.of_step(s) for s in steps},
        **{f"print {s} +module": prints.of_step(s, "embedlab.datasets.school") for s in steps[:2]},
        **{f"spec {s}": prints.settings_spec(s) for s in steps},
    }


def test_kept_answers_equal_fresh_ones_and_are_read_without_parsing(tmp_path):
    fresh = _every_answer(CodePrints(SRC))
    cache = tmp_path / "cache"
    computing = CodePrints(SRC, cache=cache)
    assert _every_answer(computing) == fresh
    assert not cache.exists(), "the cache is written once, by save() or at exit"
    computing.save()
    (kept_file,) = cache.glob("codeprint-*.json")
    assert kept_file.name == f"codeprint-{CodePrints(SRC).sources_hash()}.json"
    kept = CodePrints(SRC, cache=cache)
    kept.steps()  # lists the steps modules' functions: parses those only
    parsed = set(kept._modules)
    assert _every_answer(kept) == fresh
    assert set(kept._modules) == parsed, "a kept answer was computed again"


def test_an_edit_anywhere_reads_another_cache_file_and_drops_the_old(tmp_path):
    src = copy_src(tmp_path)
    cache = tmp_path / "cache"
    step = "ee.sweep"
    first = CodePrints(src, cache=cache)
    before = first.of_step(step)
    first.save()
    (old_file,) = cache.glob("codeprint-*.json")
    edit_a_body(src / "embedlab" / "methods" / "elastic.py")  # a module that ee.sweep runs
    after = CodePrints(src, cache=cache)
    assert after.of_step(step) != before
    assert after.of_step(step) == CodePrints(src).of_step(step)
    after.save()
    (new_file,) = cache.glob("codeprint-*.json")
    assert new_file != old_file


def test_an_unreadable_cache_file_is_computed_afresh(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f"codeprint-{CodePrints(SRC).sources_hash()}.json").write_text("{not json")
    recovered = CodePrints(SRC, cache=cache)
    assert recovered.of_step("ee.sweep") == CodePrints(SRC).of_step("ee.sweep")
    recovered.save()
    json_text = next(cache.glob("codeprint-*.json")).read_text()
    assert json_text.startswith("{") and "ee.sweep" in json_text
