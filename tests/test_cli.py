"""Start-up: the command line and each step's job import only what they use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from embedlab import steps
from embedlab.codeprint import CodePrints

from .conftest import REPO


def test_an_unknown_verb_lists_every_verb():
    proc = subprocess.run(
        [sys.executable, "-m", "embedlab", "no-such-verb"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "timings" in proc.stderr and "fetch" in proc.stderr


def test_the_command_line_imports_no_method():
    """The user's commands (fetch, build, docs, ...) start without scikit-learn, numba or any
    paper's experiments."""
    code = (
        "import sys; from embedlab import cli; cli.build_parser();"
        "print(sorted(m for m in ('sklearn', 'numba', 'embedlab.experiments.snest')"
        " if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr


STEP_MODULES = sorted({steps.step_module(step) for step in CodePrints(REPO / "src").steps()})


@pytest.mark.parametrize("module", STEP_MODULES)
def test_a_steps_module_imports_its_methods_where_it_fits(module):
    """Table, figure and merge jobs import neither scikit-learn nor numba (~1 s per job): the
    steps modules import their methods inside the functions that fit."""
    code = (
        f"import sys, {module};"
        "print(sorted(m for m in ('sklearn', 'numba') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr


# the modules a lean job must not import: each costs start-up time (scikit-learn ~1 s with
# the scipy.stats it loads, numba ~0.3 s, scipy.sparse ~0.1 s) that the job would not use
HEAVY = ("sklearn", "numba", "scipy.sparse", "scipy.stats", "matplotlib")


def _step_imports(step: str, settings: dict, arguments: dict, heavy=HEAVY) -> str:
    """Which of ``heavy`` a job of workflow step ``step`` has imported when it ends (the step
    called as the runner calls it, embedlab.steps.call)."""
    code = (
        f"import sys; from embedlab.steps import call; call({step!r}, {settings!r}, "
        f"{arguments!r}); print(0, sorted(m for m in {tuple(heavy)!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    rc, _, found = proc.stdout.strip().partition(" ")
    assert rc == "0", proc.stdout + proc.stderr
    return found


def _dcode_results(tmp_path) -> dict:
    """The ``dcode.table`` step's arguments for a toy Table 2 result file of two subsets (the
    layout of ``dcode.rank``'s JSON), as benchmarks/bench_startup.py times it."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_startup
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return bench_startup._dcode_result(tmp_path)


def test_lean_jobs_import_only_what_they_use(tmp_path):
    """A dataset build, a table, a figure and the dataset summary run without the libraries
    they do not call: s1k's builder without scikit-learn's datasets, the summary and the D-CODE
    table without any method (scikit-learn, numba), no job without sparse input scipy.sparse."""
    registry = str(REPO / "config" / "datasets.yaml")
    s1k = tmp_path / "s1k"
    files = {"data": str(s1k / "data.npz"), "table": str(s1k / "items.tsv"),
             "meta": str(s1k / "meta.json")}  # fmt: skip
    build = {"registry": registry, "raw_dir": str(tmp_path), "overrides": {}}
    light = ("sklearn", "numba", "scipy.stats", "matplotlib")
    assert _step_imports("datasets.build", build, {"raw": [], "dataset": "s1k", **files},
                         light) == "[]"  # fmt: skip
    summary = {"meta": [files["meta"]], "csv": str(tmp_path / "d.csv"),
               "md": str(tmp_path / "d.md")}  # fmt: skip
    assert _step_imports("report.datasets", {"own": {}}, summary) == "[]"
    figure = {"png": str(tmp_path / "fig2b.png"), "pdf": str(tmp_path / "fig2b.pdf")}
    no_fit = ("sklearn", "numba", "scipy.sparse", "scipy.stats")
    assert _step_imports("snest.kernel_figure", {}, figure, no_fit) == "[]"
    # the table's Wilcoxon tests are scipy.stats's
    table = _dcode_results(tmp_path)
    lean = ("sklearn", "numba", "matplotlib")
    assert _step_imports("dcode.table", {"left_out": {}}, table, lean) == "[]"
    assert "dcode_mle" in (tmp_path / "t.csv").read_text()


def test_triplet_fit_jobs_import_no_scikit_learn(tmp_path):
    """The t-STE jobs that fit triplet embeddings and measure triplet errors (a search of one
    grid value: a K form under the paper's text, an X form under the authors' code) run the
    methods' plain fits (methods.triplet_fit), not the scikit-learn estimators: no
    scikit-learn, and none of the scipy.stats that sklearn.base loads."""
    import numpy as np
    import pandas as pd

    from embedlab import artifacts

    rng = np.random.default_rng(0)
    triplets = np.array([rng.choice(12, 3, replace=False) for _ in range(60)])
    items = pd.DataFrame({"name": [f"i{k}" for k in range(12)]})
    art = artifacts.Artifact("triplets", {"triplets": triplets, "labels": np.arange(12) % 3},
                             items, {"n": 12, "name": "tiny"})  # fmt: skip
    artifacts.save(art, tmp_path / "tiny", "tiny")
    data = [str(tmp_path / "tiny" / name) for name in ("data.npz", "items.tsv", "meta.json")]
    job = {"data": data, "dataset": "tiny", "index": "0"}
    shared = {"dims": [2], "n_folds": 2, "seed": 0, "max_iter": 5, "max_triplets": None}
    paper_text = {**shared, "grid": {"lam": [0.1]},
                  "kform_solver": {"solver": "accelerated", "precision": "float32", "tol": 1e-7}}
    authors = {**shared, "grid": {"mu": [0.05]}, "nn_training": "first", "solver": {}}
    no_sklearn = ("sklearn", "scipy.stats")
    assert _step_imports("tste.search", paper_text, {**job, "reading": "tste", "method":
                         "GNMDS-K", "npz": str(tmp_path / "k.npz")}, no_sklearn) == "[]"
    assert _step_imports("tste.authors_search", authors, {**job, "reading": "tste_authors",
                         "method": "CKL-X", "npz": str(tmp_path / "x.npz")}, no_sklearn) == "[]"
    assert (tmp_path / "k.npz").is_file() and (tmp_path / "x.npz").is_file()


def test_the_dcode_table_names_each_variants_fit_as_the_methods_do():
    """rank_table takes each variant's fit from experiments.dcode.fits.FITS (no method import):
    FITS must split the methods' VARIANTS by their static flag."""
    from embedlab.experiments.dcode.fits import FITS
    from embedlab.methods.dcode import VARIANTS

    fit_of = {variant: fit for fit, variants in FITS.items() for variant in variants}
    assert fit_of == {v: "static" if s["static"] else "dynamic" for v, s in VARIANTS.items()}


def test_measuring_1nn_errors_needs_no_numba_and_no_manifold_module():
    """Fits that measure only 1-NN errors (t-STE, Diffeomap) import scikit-learn's neighbours
    and not knn_affinities (numba) or sklearn.manifold (trustworthiness)."""
    code = (
        "import sys, numpy as np; from embedlab.evaluate.knn import loo_1nn_error_rate;"
        "loo_1nn_error_rate(np.arange(20.0).reshape(10, 2), np.arange(10) % 2);"
        "print(sorted(m for m in ('numba', 'sklearn.manifold', 'embedlab.knn_affinities')"
        " if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr
