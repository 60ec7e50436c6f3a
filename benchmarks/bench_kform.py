"""Benchmark: one t-STE K-form fit at n = 1000, the plain solver against the accelerated one.

The paper-text protocol's K forms (GNMDS-K, STE-K, CKL-K) optimise an n x n Gram matrix by
projected gradient, one eigen-decomposition per iteration. Compared in one run, on the same
triplets and start:

* ``adaptive``: van der Maaten's step rule (today's solver), up to ``--max-iter`` iterations;
* ``accelerated``: the same step rule with Nesterov momentum and restarts, stopped when no
  step lowers the cost by ``--rtol`` (relative), in float64 and with float32 projections.

Printed per variant: seconds, iterations, final cost, its relative difference to the plain
solver's, and the seconds until the accelerated run first reached the plain solver's final
cost to 1e-6 (relative) -- the speed-up at equal objective value.

Data: ``--artifact`` (default results/datasets/mnist_triplets_1k, the paper-text MNIST
triplets; ``--max-triplets`` of them, seeded) or, when it is absent, planted triplets of 1000
random points. All timings come from this one run; compare only within it.

    .venv/bin/python benchmarks/bench_kform.py [--method STE-K] [--lam 0.1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from embedlab.methods.triplets import METHODS

ARTIFACT = Path("results/datasets/mnist_triplets_1k")


def load(artifact: Path, max_triplets: int, seed: int):
    if (artifact / "meta.json").is_file():
        from embedlab.experiments.tste.protocol import load_triplets

        trip, n, _ = load_triplets(artifact, max_triplets, seed)
        return trip, n, f"{artifact} ({len(trip)} triplets)"
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(1000, 10))
    ijl = rng.integers(0, 1000, size=(max_triplets, 3))
    ijl = ijl[(ijl[:, 0] != ijl[:, 1]) & (ijl[:, 0] != ijl[:, 2]) & (ijl[:, 1] != ijl[:, 2])]
    d = lambda a, b: ((points[a] - points[b]) ** 2).sum(1)  # noqa: E731
    swap = d(ijl[:, 0], ijl[:, 1]) > d(ijl[:, 0], ijl[:, 2])
    ijl[swap, 1], ijl[swap, 2] = ijl[swap, 2], ijl[swap, 1].copy()
    return ijl, 1000, f"planted triplets of 1000 random points ({len(ijl)})"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--artifact", type=Path, default=ARTIFACT)
    p.add_argument("--method", default="STE-K", choices=["GNMDS-K", "STE-K", "CKL-K"])
    p.add_argument("--lam", type=float, default=0.1, help="trace weight (GNMDS-K, STE-K)")
    p.add_argument("--max-triplets", type=int, default=90_000)
    p.add_argument("--max-iter", type=int, default=1000)
    p.add_argument("--rtol", type=float, default=1e-7)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    trip, n, what = load(args.artifact, args.max_triplets, args.seed)
    params = {} if args.method == "CKL-K" else {"lam": args.lam}
    print(f"{args.method} {params}, n = {n}, data: {what}; one BLAS thread")
    variants = {
        "adaptive": dict(solver="adaptive"),
        "accelerated": dict(solver="accelerated", tol=args.rtol),
        "accelerated float32": dict(solver="accelerated", tol=args.rtol, precision="float32"),
    }
    results = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for name, extra in variants.items():
            est = METHODS[args.method](
                n_components=10, max_iter=args.max_iter, random_state=args.seed, **params, **extra
            )
            t0 = time.perf_counter()
            est.fit(trip, n=n)
            seconds = time.perf_counter() - t0
            results[name] = (seconds, est)
    plain_s, plain = results["adaptive"]
    target = plain.cost_ * (1 + 1e-6)
    print(f"{'variant':22s} {'seconds':>8s} {'iters':>6s} {'cost':>14s} {'rel. diff':>10s} "
          f"{'s to plain cost':>16s} {'speed-up':>9s}")  # fmt: skip
    for name, (seconds, est) in results.items():
        hit = np.flatnonzero(est.cost_history_ <= target)
        to_plain = seconds * (hit[0] + 1) / est.n_iter_ if hit.size else float("nan")
        rel = (est.cost_ - plain.cost_) / abs(plain.cost_)
        print(f"{name:22s} {seconds:8.1f} {est.n_iter_:6d} {est.cost_:14.6f} {rel:10.2e} "
              f"{to_plain:16.1f} {plain_s / to_plain:9.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
