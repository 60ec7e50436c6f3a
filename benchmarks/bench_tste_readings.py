"""Benchmark: the t-STE readings authors_code and authors_figure on the MNIST X forms, and the
cost of the released K-form projection.

Part 1 runs the authors' protocol (:func:`embedlab.experiments.tste.authors.authors_part`, the
workflow's own code) on ``results/datasets/mnist_triplets_1k_authors`` (build it first:
``snakemake results/datasets/mnist_triplets_1k_authors/data.npz``) for the X forms at the
given dimensions: the 1-NN error of one fit on the first 10 % of the triplets, and the
generalisation error (ties correct) averaged over the first ``--folds`` folds of the 10-fold
split. Each method runs under the scripts' settings (authors_code: t-STE-X alpha = dims - 1,
sum log p) and, for STE-X and t-STE-X, under the figure's (authors_figure: t-STE-X alpha = 1,
both maximising sum p). CKL-X's mu is searched as the workflow does (at the largest of
``--search-dims``).

Part 2 (``--projection``) times one PSD projection at n = 1000 on one BLAS thread: the
symmetric eigh (paper-text K forms) against the general eig of the released code
(:func:`embedlab.methods.triplet_solvers.project_psd_released`), which the authors_code K forms pay
every iteration.

    NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tste_readings.py \\
        [--dims 2 10] [--folds 5] [--methods t-STE-X STE-X GNMDS-X CKL-X] [--projection]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

ARTIFACT = "results/datasets/mnist_triplets_1k_authors"
FIGURE = {"t-STE-X": {"alpha": 1.0, "use_log": False}, "STE-X": {"use_log": False}}
CKL_GRID = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1]


def authors_settings(dims: list[int], grid: dict, solver: dict):
    """The settings of the authors' protocol's jobs here: 10 folds, seed 0, the coded
    iterations, every triplet, the 1-NN fits on the first 10 % (MNIST), ``solver``: the
    reading's options."""
    from embedlab.experiments.tste.settings import AuthorsSettings

    return AuthorsSettings.from_mapping(
        {"dims": dims, "n_folds": 10, "seed": 0, "max_iter": None, "max_triplets": None,
         "grid": grid, "nn_training": "first", "solver": solver},
        "bench_tste_readings",
    )  # fmt: skip


def reading(method: str, dims: list[int], folds: int, solver: dict, search) -> dict:
    """{dims: {"1nn", "gen", "gen_tied"}} of one method under one reading."""
    from embedlab.experiments.tste.authors import authors_part

    settings = authors_settings(dims, {}, solver)
    t0 = time.perf_counter()
    nn = authors_part(ARTIFACT, method, -1, search, settings=settings)
    out = {int(r.dims): {"1nn": float(r.loo_1nn_error)} for r in nn.itertuples()}
    gens: dict[int, list[float]] = {d: [] for d in dims}
    tied: dict[int, list[float]] = {d: [] for d in dims}
    for k in range(folds):
        df = authors_part(ARTIFACT, method, k, search, settings=settings)
        for r in df.itertuples():
            gens[int(r.dims)].append(float(r.generalisation_error))
            tied[int(r.dims)].append(float(r.tied_fraction))
    for d in dims:
        out[d].update(gen=round(float(np.mean(gens[d])), 4), gen_tied=float(np.mean(tied[d])))
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def projection_times(n: int = 1000, repeats: int = 3) -> dict:
    """Seconds per projection of a rank-500 PSD matrix plus an antisymmetric perturbation."""
    from threadpoolctl import threadpool_limits

    from embedlab.methods.triplet_solvers import project_psd, project_psd_released

    rng = np.random.default_rng(0)
    Y = rng.normal(size=(n, n // 2))
    A = 1e-3 * rng.normal(size=(n, n))
    M = Y @ Y.T / n + (A - A.T)
    out = {}
    with threadpool_limits(1):
        for name, f in [
            ("eigh float64 (paper_text)", lambda: project_psd(M)),
            ("eigh float32 (paper_text)", lambda: project_psd(M, "float32")),
            ("eig float64 (released)", lambda: project_psd_released(M)),
            ("eig float32 (released)", lambda: project_psd_released(M, "float32")),
        ]:
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                f()
                times.append(time.perf_counter() - t0)
            out[name] = round(min(times), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[2])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--methods", nargs="+", default=["t-STE-X", "STE-X", "GNMDS-X", "CKL-X"])
    ap.add_argument("--search-dims", type=int, nargs="+", default=list(range(2, 31, 2)))
    ap.add_argument("--projection", action="store_true", help="time the projections too")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from embedlab.experiments.tste.authors import authors_search
    from embedlab.experiments.tste.protocol import load_triplets

    results: dict = {}
    if args.projection:
        results["projection_seconds_n1000"] = projection_times()
        print(results["projection_seconds_n1000"], flush=True)
    for method in args.methods:
        search = None
        if method == "CKL-X":
            trip, n, _, allow_self = load_triplets(ARTIFACT, None, 0, True)
            searched = authors_settings(args.search_dims, {"mu": CKL_GRID}, {})
            search = authors_search(method, trip, n, allow_self, settings=searched)
            print(f"CKL-X search: {search.chosen}", flush=True)
        readings = {"authors_code": {}}
        if method in FIGURE:
            readings["authors_figure"] = FIGURE[method]
        for name, solver in readings.items():
            res = reading(method, args.dims, args.folds, solver, search)
            results[f"{name} {method}"] = res
            print(f"{name:15s} {method:8s} {res}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
