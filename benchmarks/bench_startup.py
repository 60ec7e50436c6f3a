"""Start-up of workflow steps as whole processes: each job imports only what it uses.

    python benchmarks/bench_startup.py [--rounds 5] [--kinds help build table ...] [--against SRC]

Runs small real steps of several kinds, ``python -m embedlab <verb> ...`` or a workflow step
as its rule's script calls it (``embedlab.steps.call``), on tiny inputs made in a temporary
folder, each as a fresh process, and beside each the same step preceded by
``import`` of every heavy library the package uses (scikit-learn's estimators, neighbours,
manifold and datasets modules, scipy.stats and scipy.sparse, numba, matplotlib.pyplot): what
the steps would load if every module imported its dependencies at the top. Kinds:

- ``help``: ``python -m embedlab --help`` (the user's command line: docs, fetch, build, ...);
- ``build``: the ``datasets.build`` step, the s1k builder at 200 points (no raw file);
- ``summary``: the ``report.datasets`` step on that artifact;
- ``table``: the ``dcode.table`` step on a two-subset toy result file;
- ``figure``: the ``snest.kernel_figure`` step (Fig. 2b, the schematic, no input);
- ``fit``: the ``snest.embed`` step, t-SNE R^2 of the 200 points, 20 epochs (its numba kernels
  load from the cache; the first, uncounted round compiles them where the cache is cold).

Every round runs each (step, variant) once, in an order shuffled per round. Prints, per step,
the wall seconds (min and median over the rounds) and the ratio of the medians, lean / eager;
two floors (``python -c pass``, ``import numpy, pandas``); and the load average around the run.
``--against SRC`` adds the lean step run with another checkout's ``src`` (PYTHONPATH) as a
third variant, e.g. a ``git archive`` of another commit, for a before / after comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
KINDS = ("help", "build", "summary", "table", "figure", "fit")
#: the libraries a job would load if every module imported its dependencies at the top
EAGER = (
    "sklearn.base", "sklearn.neighbors", "sklearn.manifold", "sklearn.decomposition",
    "sklearn.datasets", "scipy.stats", "scipy.sparse", "numba", "matplotlib.pyplot",
)  # fmt: skip
FLOORS = {"python -c pass": "pass", "import numpy, pandas": "import numpy, pandas"}


def _dcode_result(folder: Path) -> dict[str, object]:
    """The ``dcode.table`` step's arguments for a toy Table 2 result file (two subsets)."""
    rows = [
        {"n_authors": 4, "n_words": 12, "subset": s, "method": m, "median_rank": r + s,
         "mean_rank": r + s, "median_rank_set": r + s, "median_rank_counts": r + s}
        for s in (0, 1) for m, r in (("dcode", 1.0), ("dcode_mle", 2.0), ("static_dcode", 3.0),
                                     ("empirical", 2.5))
    ]  # fmt: skip
    result = {"size": [4, 12], "observation": "counts", "prediction": "predictive",
              "fit_step": 1, "paper_words": "set", "params": {}, "chosen": {}, "validation": [],
              "rows": rows}  # fmt: skip
    (folder / "rank.json").write_text(json.dumps(result))
    (folder / "paper.csv").write_text("n_authors,n_words,method,median_rank\n4,12,dcode,2.0\n")
    return {"results": [str(folder / "rank.json")], "own_results": [],
            "paper": str(folder / "paper.csv"), "csv": str(folder / "t.csv"),
            "md": str(folder / "t.md"), "md_long": str(folder / "l.md")}  # fmt: skip


def _artifact_files(folder: Path) -> dict[str, str]:
    """The three files of the artifact in ``folder``, named as the build step's outputs."""
    names = {"data": "data.npz", "table": "items.tsv", "meta": "meta.json"}
    return {key: str(folder / name) for key, name in names.items()}


def steps(folder: Path) -> dict[str, list[str] | tuple[str, dict, dict]]:
    """Each kind's job on inputs in ``folder``: a command line (the words after ``python -m
    embedlab``) or a workflow step (its name, settings and keyword arguments)."""
    s1k = folder / "s1k"
    return {
        "help": ["--help"],
        "build": ("datasets.build",
                  {"registry": str(REPO / "config" / "datasets.yaml"), "raw_dir": str(folder),
                   "overrides": {"n_points": 200}},
                  {"raw": [], "dataset": "s1k", **_artifact_files(s1k)}),
        "summary": ("report.datasets", {"own": {}},
                    {"meta": [str(s1k / "meta.json")], "csv": str(folder / "d.csv"),
                     "md": str(folder / "d.md")}),
        "table": ("dcode.table", {"left_out": {}}, _dcode_result(folder)),
        "figure": ("snest.kernel_figure", {}, {"png": str(folder / "fig2b.png"),
                                               "pdf": str(folder / "fig2b.pdf")}),
        "fit": ("snest.embed",
                {"grid": {"learning_rate": [10.0]}, "restarts": 1, "seed": 0, "max_iter": 20,
                 "log_every": 0, "precision": "float64", "perplexity": 10.0,
                 "stopping": {"rate_window": 0, "plateau_tol": 0.0, "abandon_margin": 0.0}},
                {"data": list(_artifact_files(s1k).values()),
                 "runs_file": str(folder / "tsne-2.npz"), "dataset": "s1k", "cell": "tsne-2"}),
    }  # fmt: skip


def command(job, variant: str, against: str | None) -> tuple[list[str], str]:
    """(the process's command line, its PYTHONPATH) of one variant of a job (:func:`steps`)."""
    if isinstance(job, tuple):  # a workflow step, called as workflow/scripts/step.py does
        name, settings, arguments = job
        code = f"from embedlab.steps import call\ncall({name!r}, {settings!r}, {arguments!r})"
        if variant == "eager":
            code = f"import {', '.join(EAGER)}\n{code}"
        return [sys.executable, "-c", code], against if variant == "against" else str(SRC)
    argv = job
    if variant == "eager":
        code = (
            f"import {', '.join(EAGER)}\nfrom embedlab.cli import main\n"
            f"raise SystemExit(main({argv!r}))"
        )
        return [sys.executable, "-c", code], str(SRC)
    return [sys.executable, "-m", "embedlab", *argv], against if variant == "against" else str(SRC)


def run(cmd: list[str], pythonpath: str) -> float:
    """Wall seconds of one process (fails on a non-zero exit)."""
    env = {**os.environ, "PYTHONPATH": pythonpath, "NUMBA_NUM_THREADS": "1",
           "OMP_WAIT_POLICY": "PASSIVE"}  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode:
        shown = " ".join(cmd)[:300]
        raise RuntimeError(f"{shown} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--against", help="another checkout's src folder: a third variant")
    parser.add_argument("--seed", type=int, default=0, help="of the per-round order")
    args = parser.parse_args(argv)
    variants = ["lean", "eager"] + (["against"] if args.against else [])
    rng = random.Random(args.seed)
    times: dict[tuple[str, str], list[float]] = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines = steps(folder)
        run(*command(lines["build"], "lean", None))  # the inputs of summary and fit
        jobs = [(k, v) for k in args.kinds for v in variants]
        jobs += [(name, "floor") for name in FLOORS]
        for round_ in range(args.rounds + 1):  # round 0 warms caches (numba, fonts), uncounted
            rng.shuffle(jobs)
            for kind, variant in jobs:
                if variant == "floor":
                    seconds = run([sys.executable, "-c", FLOORS[kind]], str(SRC))
                else:
                    seconds = run(*command(lines[kind], variant, args.against))
                if round_:
                    times.setdefault((kind, variant), []).append(seconds)
    load_after = os.getloadavg()
    print(f"{args.rounds} rounds; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after; wall s min / median")  # fmt: skip
    header = "".join(f"{v:>16}" for v in variants)
    print(f"{'step':>8}{header}   lean / eager" + ("   lean / against" if args.against else ""))
    medians = {key: statistics.median(v) for key, v in times.items()}
    for kind in args.kinds:
        cells = "".join(
            f"{min(times[kind, v]):>8.2f} /{medians[kind, v]:>6.2f}" for v in variants
        )
        ratio = f"   x{medians[kind, 'lean'] / medians[kind, 'eager']:.2f}"
        if args.against:
            ratio += f"          x{medians[kind, 'lean'] / medians[kind, 'against']:.2f}"
        print(f"{kind:>8}{cells}{ratio}")
    for name in FLOORS:
        print(f"floor, {name}: {min(times[name, 'floor']):.2f} / {medians[name, 'floor']:.2f}")
    return {"times": {f"{k} {v}": t for (k, v), t in times.items()}, "medians": medians}


if __name__ == "__main__":
    main()
