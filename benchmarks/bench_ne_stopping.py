"""Fewer epochs for the same Table 1: the plateau and abandonment tests against the full budget.

SNEST Table 1 reports, per (dataset, cell), the minimal KL over restarts x learning rates
within 5000 epochs; with the paper's tol = 1e-9 nearly every run spends all 5000. This script

1. runs the workflow's own ``snest.embed`` jobs (with the settings the workflow hands them
   under the given config, :mod:`workflow_jobs`, so grids and restarts are the config's) at
   the full budget, with the plateau and abandonment tests off, keeping every run's cost
   trace (``--cache``; runs already there are reused);
2. replays the stopping tests on those traces with :func:`embedlab.optimize.stop_reason` -- the
   function the optimiser itself calls, and the runs are deterministic, so a stopped run is
   exactly the prefix of its full run -- for each candidate setting, in the workflow's run
   order (the reference of the abandonment test is the best run so far of the cell), and
   prints per cell the minimal KL at the full budget and with the tests, and the epochs spent;
3. with ``--verify W TOL MARGIN``, runs the jobs again for real with that setting and checks
   that the minimal KL of every cell is the replayed one.

    python benchmarks/bench_ne_stopping.py --datasets school nips17 w1000 --restarts 2
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
from workflow_jobs import job_settings

from embedlab import runs, steps
from embedlab.experiments.snest.cells import make_estimator
from embedlab.optimize import stop_reason

REPO = Path(__file__).resolve().parents[1]
OFF = {"rate_window": 0, "plateau_tol": 0.0, "abandon_margin": float("inf")}


def embed_jobs(configfile: str, datasets: list[str]) -> list[tuple[str, str, dict]]:
    """(dataset, cell, settings) of the config's Table 1 jobs on ``datasets``: the settings the
    workflow hands each ``snest.embed`` job."""
    config, _ = job_settings([configfile], "snest_embed", [])
    section = config["snest"]
    jobs = [{"dataset": d, "cell": c} for d in section["datasets"] if d in datasets
            for c in section["cells"]]  # fmt: skip
    _, found = job_settings([configfile], "snest_embed", jobs)
    return [(job["dataset"], job["cell"], s) for job, s in zip(jobs, found, strict=True)]


def stopping_of(window, tol, margin) -> dict:
    """The settings' ``stopping`` of one candidate (W epochs, plateau tol, abandon margin)."""
    return {"rate_window": int(window), "plateau_tol": float(tol), "abandon_margin": float(margin)}


def run_job(job: tuple[str, str, dict], out: Path, restarts: int | None, stopping: dict) -> None:
    """The workflow's job ``job`` writing to ``out``, with ``stopping`` (and ``restarts``)."""
    dataset, cell, settings = job
    changed = {**settings, "stopping": stopping}
    if restarts is not None:
        changed["restarts"] = restarts
    folder = REPO / "results" / "datasets" / dataset
    data = [str(folder / name) for name in ("data.npz", "items.tsv", "meta.json")]
    steps.call("snest.embed", changed, {"data": data, "runs_file": str(out), "dataset": dataset,
                                        "cell": cell})  # fmt: skip


def replay(runs_file: Path, window: int, tol: float, margin: float) -> tuple[float, int]:
    """(minimal KL, epochs spent) of a cell's runs had they run with the tests."""
    saved = runs.load_runs(runs_file)
    table, meta = saved["runs"], saved["meta"]
    best_cost, spent = np.inf, 0
    for k, row in enumerate(table):
        if row["cost"] is None:  # diverged: the same with or without the tests
            continue
        trace = saved["trace"](k)
        params = {p: row[p] for p in meta["grid"]}
        settings = make_estimator(
            meta["cell"], **params, max_iter=meta["max_iter"], rate_window=window,
            plateau_tol=tol, abandon_margin=margin,
        )._settings()  # fmt: skip
        reference = best_cost if np.isfinite(best_cost) else None
        stop = next(
            (e + 1 for e in range(len(trace)) if stop_reason(settings, trace[: e + 1], reference)),
            len(trace),
        )
        # a stopped run reports the cost of its coordinates after its last step
        cost = float(trace[stop]) if stop < len(trace) else float(row["cost"])
        spent += stop
        best_cost = min(best_cost, cost)
    return best_cost, spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", default="config/config.yaml")
    ap.add_argument("--datasets", nargs="+", default=["school", "nips17", "w1000"])
    ap.add_argument("--restarts", type=int, help="restarts per cell (default: the config's)")
    ap.add_argument("--cache", default="results/benchmarks/ne_stopping")
    ap.add_argument("--windows", type=int, nargs="+", default=[100, 250])
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-5, 1e-4])
    ap.add_argument("--margins", type=float, nargs="+", default=[np.inf, 0.0])
    ap.add_argument("--show", nargs=3, metavar=("W", "TOL", "MARGIN"), help="per-cell table")
    ap.add_argument("--verify", nargs=3, metavar=("W", "TOL", "MARGIN"))
    args = ap.parse_args()
    cache = REPO / args.cache
    jobs = embed_jobs(args.configfile, args.datasets)
    files = {}
    for job in jobs:
        dataset, cell, _ = job
        out = cache / "full" / dataset / f"{cell}.npz"
        if not out.exists():
            print(f"full budget: {dataset} {cell}", flush=True)
            run_job(job, out, args.restarts, OFF)
        files[dataset, cell] = out
    settings = list(itertools.product(args.windows, args.tols, args.margins))
    rows = []
    for (dataset, cell), path in files.items():
        full = runs.load_runs(path)
        full_kl = min(r["cost"] for r in full["runs"] if r["cost"] is not None)
        full_epochs = sum(r["n_iter"] for r in full["runs"])
        row = {"dataset": dataset, "cell": cell, "full KL": full_kl}
        for w, t, m in settings:
            kl, epochs = replay(path, w, t, m)
            row[f"W{w} tol{t:g} m{m:g} dKL"] = kl - full_kl
            row[f"W{w} tol{t:g} m{m:g} epochs"] = epochs / full_epochs
        rows.append(row)
    df = pd.DataFrame(rows)
    print("per setting (W epochs, plateau tol, abandon margin): largest |dKL| over the cells,")
    print("cells whose KL at 2 decimals changes, epochs spent relative to the full budget")
    for w, t, m in settings:
        key = f"W{w} tol{t:g} m{m:g}"
        stopped_kl = df["full KL"] + df[f"{key} dKL"]
        changed = int((df["full KL"].round(2) != stopped_kl.round(2)).sum())
        print(
            f"{key:>24}: {df[f'{key} dKL'].abs().max():.5f}  {changed}/{len(df)} cells  "
            f"{df[f'{key} epochs'].mean():6.1%}"
        )
    if args.show:
        key = "W{} tol{:g} m{:g}".format(int(args.show[0]), *map(float, args.show[1:]))
        print(f"\nper cell, {key}:")
        cols = ["dataset", "cell", "full KL", f"{key} dKL", f"{key} epochs"]
        print(df[cols].round(5).to_string(index=False))
    if args.verify:
        w, t, m = args.verify
        for job in jobs:
            dataset, cell, _ = job
            out = cache / "verify" / dataset / f"{cell}.npz"
            run_job(job, out, args.restarts, stopping_of(w, t, m))
            real = runs.load_runs(out)["best"]["cost"]
            replayed, _ = replay(files[dataset, cell], int(w), float(t), float(m))
            print(f"verify {dataset} {cell}: run {real:.6f} replayed {replayed:.6f}")


if __name__ == "__main__":
    main()
