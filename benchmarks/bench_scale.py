"""Our t-SNE R^2 against openTSNE on the same sparse P and schedule, with SNEST R^{2,1} and
t-SNE R^3 beside them: the scale experiment's targets (time and KL against openTSNE).

On n MNIST digits (a seeded subset of the 70,000 training + test digits, read from the mirror
through the registry's ``mnist_70000`` builder) one P is built as the scale experiment builds
it (perplexity 30, k = 90 neighbours in PCA-50: :mod:`embedlab.knn_affinities`); then, in one
process, each method is fitted with the experiment's own code
(:func:`embedlab.experiments.scale.fits.fit_map`: the same warm-up, start, schedule and
learning rate), and every final map's KL is evaluated exactly
(:func:`embedlab.experiments.scale.measures.measure`).
Printed: wall seconds, epochs, exact KL per method, then the targets:

* t-SNE R^2 (ours, fft) / openTSNE: wall time ratio <= 1, exact KL within 1 %;
* SNEST R^{2,1} (ours): wall time <= 2x our t-SNE R^2's, exact KL below t-SNE R^3's.

    python benchmarks/bench_scale.py --n 2000
    python benchmarks/bench_scale.py --n 70000 --max-iter 750   # the issue's size (hours)

Timings are wall clock on whatever else the machine runs; ``--threads`` sets numba's and
openTSNE's threads alike. ``--rounds R`` fits every method R times in turn (the order reversed
every other round) and compares median times: on a shared host one pair of fits can be
~20 % off either way.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before numba starts its OpenMP threads

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from embedlab import registry  # noqa: E402
from embedlab.datasets import build_dataset  # noqa: E402
from embedlab.experiments.scale import fits, measures  # noqa: E402
from embedlab.experiments.scale.settings import EmbedSettings  # noqa: E402
from embedlab.knn_affinities import knn_affinities  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("EMBEDLAB_MIRROR", REPO.parent / "shared" / "datasets"))


def digits(n: int, seed: int):
    """(X, labels) of n digits drawn from all 70,000 (the registry's mnist_70000 builder)."""
    reg = registry.load(REPO / "config" / "datasets.yaml")
    spec = registry.dataset_spec(reg, "mnist_70000", {"n_digits": n, "seed": seed})
    art = build_dataset("mnist_70000", spec, MIRROR)
    return art.arrays["X"], art.arrays["labels"]


METHODS = tuple(m for m in fits.METHODS if m != "ee")  # the targets need no EE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--max-iter", type=int, default=750)
    parser.add_argument("--exaggeration-epochs", type=int, default=250)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--snest-repulsion", choices=["exact", "fft"], default="fft")
    parser.add_argument("--cost-every", type=int, default=50,
                        help="epochs between our methods' cost values (the config's default)")
    parser.add_argument("--tsne3-repulsion", choices=["exact", "fft"], default="exact",
                        help="t-SNE R^3's (its 3-D FFT grid is mostly over the cap)")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS),
                        help="a subset (the ratios need their pairs)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="fit every method this many times, in turn (the order reversed "
                             "every other round); the ratios use each method's median time")
    args = parser.parse_args()
    numba.set_num_threads(args.threads)

    X, labels = digits(args.n, args.seed)
    started = time.perf_counter()
    aff = knn_affinities(X, perplexity=30.0, pca_dims=50, seed=args.seed)
    print(f"n = {args.n}: P in {time.perf_counter() - started:.1f} s ({aff.method} neighbours, "
          f"nnz {aff.P.nnz}); {args.max_iter} epochs, {args.exaggeration_epochs} exaggerated "
          f"x12, {args.threads} threads")
    settings = EmbedSettings(
        max_iter=args.max_iter, learning_rate="auto", exaggeration=12.0,
        exaggeration_epochs=args.exaggeration_epochs, momentum=(0.5, 0.8),
        momentum_epochs=(args.exaggeration_epochs,),
        snest={"time_ratio": 0.01, "exaggeration": 4.0, "exaggeration_epochs": 100},
        ee={"lam_n": 0.01}, repulsion="fft", seed=args.seed, log_every=0,
        cost_every=args.cost_every,
    )  # fmt: skip
    repulsion = {"snest": args.snest_repulsion, "tsne3": args.tsne3_repulsion}
    methods = [m for m in METHODS if m in args.methods]
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    runs = {}
    for r in range(args.rounds):  # ABC, CBA, ABC, ...: a drifting load hits every method alike
        for method in methods if r % 2 == 0 else methods[::-1]:
            fit = fits.fit_map(
                method, aff.P, aff.Z,
                dataclasses.replace(settings, repulsion=repulsion.get(method, "fft")),
                args.threads,
            )  # fmt: skip
            seconds[method].append(fit.seconds)
            runs.setdefault(method, fit)  # the maps are measured from the first round
    rows = []
    print(f"{'method':<10} {'wall s':>8} {'epochs':>6} {'exact KL':>9} {'1-NN err':>8}  repulsion")
    for method, fit in runs.items():
        measured = measures.measure(aff.P, aff.neighbours, labels, method, fit.embedding)
        note = fits.repulsion_note(method, repulsion.get(method, "fft"), fit.exact_calls,
                                    fit.epochs)
        wall = float(np.median(seconds[method]))
        rows.append({"method": method, "wall_s": wall, "exact_kl": measured["exact_kl"]})
        print(f"{method:<10} {wall:8.1f} {fit.epochs:6d} {measured['exact_kl']:9.4f} "
              f"{measured['nn1_error']:8.3f}  {note}")
    if args.rounds > 1:
        print("wall s per round (median above): "
              + "; ".join(f"{m} " + " ".join(f"{t:.1f}" for t in ts) for m, ts in seconds.items()))
    for line in measures.targets(pd.DataFrame(rows)):
        print(line)


if __name__ == "__main__":
    main()
