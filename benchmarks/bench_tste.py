"""Benchmark: embedlab's t-STE against cblearn's TSTE on the same triplets.

Data: the MNIST triplet artifact ``results/datasets/mnist_triplets_1k`` when it has been
built, else random data made by the same protocol (1000 points drawn from a mixture of 10
Gaussians in 50 dimensions; 100,000 triplets: i uniform, j uniform among the 50 nearest
neighbours of i, l uniform among the points farther from i than j). Each method runs to its
own stopping rule (embedlab: van der Maaten's step rule, at most 1000 iterations; cblearn:
scipy L-BFGS-B, at most 1000 iterations). Reported: wall time, iterations, the fraction of
the fitted triplets each embedding satisfies, the fraction of held-out triplets (random data
only: fresh triplets from the same protocol) and the leave-one-out 1-NN error with the
labels, with embedlab / cblearn ratios.

cblearn is an optional, benchmark-only dependency; without it the script reports embedlab
alone and says so.

    .venv/bin/python benchmarks/bench_tste.py [--json out.json]
"""

from __future__ import annotations

import os

# GNU OpenMP's default busy-waiting stalls parallel regions badly when the cores are shared
# with other processes; waiting passively costs nothing measurable here. Must be set before
# numba loads its OpenMP runtime.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

from embedlab.evaluate.knn import loo_1nn_error_rate  # noqa: E402
from embedlab.evaluate.triplets import triplet_error  # noqa: E402
from embedlab.methods.triplets import TSTE  # noqa: E402

ARTIFACT = Path("results/datasets/mnist_triplets_1k")
# spread of the random mixture's centres (unit within-cluster noise): clusters overlap, so
# that, as on MNIST, a 2-D map cannot satisfy all triplets
CENTRE_SCALE = 0.4


def protocol_triplets(Z: np.ndarray, m: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """i uniform; j uniform among the k nearest neighbours of i; l uniform among the points
    farther from i than j (Euclidean distances in Z)."""
    n = len(Z)
    sq = (Z * Z).sum(1)
    D = sq[:, None] + sq[None, :] - 2.0 * Z @ Z.T
    np.fill_diagonal(D, -np.inf)  # the point itself sorts first
    order = np.argsort(D, axis=1, kind="stable")
    i = rng.integers(0, n, size=m)
    rank_j = rng.integers(1, k + 1, size=m)
    rank_l = rng.integers(rank_j + 1, n)
    return np.stack([i, order[i, rank_j], order[i, rank_l]], axis=1).astype(np.int64)


def random_data(n: int, m: int, seed: int):
    """Mixture of 10 Gaussians in 50-D; (train triplets, held-out triplets, labels)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=CENTRE_SCALE, size=(10, 50))
    labels = rng.integers(0, 10, size=n)
    Z = centres[labels] + rng.normal(size=(n, 50))
    train = protocol_triplets(Z, m, 50, rng)
    test = protocol_triplets(Z, m // 10, 50, rng)
    return train, test, labels, "random 10-Gaussian mixture in 50-D (MNIST protocol)"


def load_data(n: int, m: int, seed: int, force_random: bool = False):
    if (ARTIFACT / "meta.json").is_file() and not force_random:
        from embedlab.artifacts import load

        art = load(ARTIFACT)
        return art["triplets"], None, art.arrays.get("labels"), f"artifact {ARTIFACT}"
    return random_data(n, m, seed)


def evaluate(name, Y, seconds, n_iter, train, test, labels):
    row = {
        "method": name,
        "seconds": seconds,
        "n_iter": int(n_iter),
        "train_accuracy": 1.0 - triplet_error(Y, train),
    }
    if test is not None:
        row["test_accuracy"] = 1.0 - triplet_error(Y, test)
    if labels is not None:
        row["loo_1nn_error"] = loo_1nn_error_rate(Y, labels)
    return row


def run_ours(train, n, dims, max_iter, seed, threads):
    numba.set_num_threads(threads)
    TSTE(n_components=dims, random_state=seed, max_iter=3).fit(train[:100], n=n)  # JIT warm-up
    t0 = time.perf_counter()
    est = TSTE(n_components=dims, random_state=seed, max_iter=max_iter).fit(train, n=n)
    return est.embedding_, time.perf_counter() - t0, est.n_iter_


def run_cblearn(train, n, dims, max_iter, seed):
    from cblearn.embedding import TSTE as CblearnTSTE

    t0 = time.perf_counter()
    est = CblearnTSTE(n_components=dims, random_state=seed, max_iter=max_iter)
    est.fit(train, n_objects=n)
    return est.embedding_, time.perf_counter() - t0, est.n_iter_


def summarise(rows: list[dict], keys: list[str]) -> dict[str, dict]:
    """Mean of each measure over the seeds, per method."""
    out: dict[str, dict] = {}
    for name in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == name]
        out[name] = {k: float(np.mean([r[k] for r in mine])) for k in ["seconds", "n_iter", *keys]}
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="points (random data only)")
    parser.add_argument("--m", type=int, default=100_000, help="triplets (random data only)")
    parser.add_argument("--dims", type=int, default=2)
    parser.add_argument("--max-iter", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--random", action="store_true", help="random data even if the MNIST artifact exists"
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)

    train, test, labels, source = load_data(args.n, args.m, args.seeds[0], args.random)
    n = int(train.max()) + 1 if labels is None else len(labels)
    load_before = os.getloadavg()[0]
    print(f"data: {source}; n = {n}, triplets = {len(train)}, dims = {args.dims}")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {load_before:.1f}; numba threads {numba.config.NUMBA_NUM_THREADS}, "
        f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}; seeds {args.seeds}"
    )
    try:
        import cblearn  # noqa: F401

        have_cblearn = True
    except ImportError:
        have_cblearn = False
        print(
            "cblearn is not installed: comparison skipped "
            "(.venv/bin/pip install --no-deps cblearn==0.4.0 sparse)"
        )

    rows = []
    thread_counts = sorted({numba.config.NUMBA_NUM_THREADS, 1}, reverse=True)
    for seed in args.seeds:
        for threads in thread_counts:
            Y, sec, it = run_ours(train, n, args.dims, args.max_iter, seed, threads)
            name = f"embedlab TSTE ({threads} thr)"
            rows.append(evaluate(name, Y, sec, it, train, test, labels) | {"seed": seed})
        if have_cblearn:
            Y, sec, it = run_cblearn(train, n, args.dims, args.max_iter, seed)
            name = "cblearn TSTE (L-BFGS-B)"
            rows.append(evaluate(name, Y, sec, it, train, test, labels) | {"seed": seed})
        print(f"seed {seed} done", flush=True)

    keys = [k for k in ("train_accuracy", "test_accuracy", "loo_1nn_error") if k in rows[0]]
    head = f"{'method':28s} {'seed':>4s} {'seconds':>8s} {'iter':>5s} "
    print("\n" + head + " ".join(f"{k:>15s}" for k in keys))
    for r in rows:
        cells = " ".join(f"{r[k]:15.4f}" for k in keys)
        print(f"{r['method']:28s} {r['seed']:4d} {r['seconds']:8.2f} {r['n_iter']:5d} {cells}")
    means = summarise(rows, keys)
    print("\nmeans over the seeds")
    for name, mean in means.items():
        cells = " ".join(f"{mean[k]:15.4f}" for k in keys)
        print(f"{name:28s} {'':4s} {mean['seconds']:8.2f} {mean['n_iter']:5.0f} {cells}")
    result = {"source": source, "n": n, "m": len(train), "load_start": load_before}
    result.update(rows=rows, means=means)
    ref = means.get("cblearn TSTE (L-BFGS-B)")
    if ref is not None:
        result["ratios"] = {}
        for name, mean in means.items():
            if name.startswith("cblearn"):
                continue
            ratio = {"speedup": ref["seconds"] / mean["seconds"]}
            ratio.update({f"{k} ours/cblearn": mean[k] / ref[k] for k in keys})
            result["ratios"][name] = ratio
            desc = ", ".join(f"{k} {v:.3f}" for k, v in ratio.items())
            print(f"{name} vs cblearn: {desc}")
    result["load_end"] = os.getloadavg()[0]
    print(f"load average at the end {result['load_end']:.1f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
