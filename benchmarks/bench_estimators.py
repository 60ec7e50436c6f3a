"""The estimators with their library defaults on data, against openTSNE's ``TSNE().fit(X)``.

What a library user runs: ``TSNE().fit_transform(X)`` and ``SNEST().fit_transform(X)`` (the
perplexity P built inside, openTSNE's schedule; :mod:`embedlab.methods.neighbour`) and
openTSNE's ``TSNE(n_jobs=threads).fit(X)`` with its defaults, on the same X and threads. Each
is fitted once to warm up (numba compiles our kernels at the first fit; openTSNE loads its
extensions), then ``--rounds`` times in turn, the order reversed every other round, so that
load on a shared host falls on both alike. Printed per fit: the wall seconds of the whole
``fit`` (affinities included) and the leave-one-out 1-NN error of the 2-D map by label
(SNEST: its space coordinates, the map as drawn); then each of ours against openTSNE as the
ratio of the median wall times, measured in this one run. Nothing is asserted.

    python benchmarks/bench_estimators.py                      # scikit-learn's digits
    python benchmarks/bench_estimators.py --data iris
    python benchmarks/bench_estimators.py --data mnist --n 5000  # needs the MNIST mirror
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before numba starts its OpenMP threads

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.neighbors import NearestNeighbors  # noqa: E402

from embedlab import SNEST, TSNE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("EMBEDLAB_MIRROR", REPO.parent / "shared" / "datasets"))
METHODS = ("tsne", "snest", "opentsne")


def load(name: str, n: int | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(X, labels): scikit-learn's digits or iris, or n MNIST digits from the mirror (the
    registry's mnist_70000 builder); ``n`` takes a seeded subset of the first two."""
    if name == "mnist":
        from embedlab import registry
        from embedlab.datasets import build_dataset

        reg = registry.load(REPO / "config" / "datasets.yaml")
        spec = registry.dataset_spec(reg, "mnist_70000", {"n_digits": n or 5000, "seed": seed})
        art = build_dataset("mnist_70000", spec, MIRROR)
        return np.asarray(art.arrays["X"], dtype=np.float64), np.asarray(art.arrays["labels"])
    from sklearn.datasets import load_digits, load_iris

    X, y = (load_digits if name == "digits" else load_iris)(return_X_y=True)
    if n is not None and n < len(X):
        keep = np.sort(np.random.default_rng(seed).choice(len(X), n, replace=False))
        X, y = X[keep], y[keep]
    return X.astype(np.float64), y


def nn1_error(Y: np.ndarray, labels: np.ndarray) -> float:
    """Leave-one-out 1-NN error: the share of points whose nearest other point in Y has
    another label."""
    idx = NearestNeighbors(n_neighbors=2).fit(Y).kneighbors(Y)[1]
    own = idx[:, 0] == np.arange(len(Y))
    nearest = np.where(own, idx[:, 1], idx[:, 0])
    return float(np.mean(labels[nearest] != labels))


def fit(method: str, X: np.ndarray, seed: int, threads: int) -> np.ndarray:
    """The 2-D map of ``method`` with its library defaults."""
    if method == "tsne":
        return TSNE(random_state=seed).fit_transform(X)
    if method == "snest":
        return SNEST(random_state=seed).fit(X).space_
    from openTSNE import TSNE as OpenTSNE  # the optional extra `scale`

    return np.asarray(OpenTSNE(n_jobs=threads, random_state=seed).fit(X), dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=["digits", "iris", "mnist"], default="digits")
    parser.add_argument("--n", type=int, default=None, help="a seeded subset of n points")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    args = parser.parse_args()
    numba.set_num_threads(args.threads)

    X, labels = load(args.data, args.n, args.seed)
    print(f"{args.data}: n = {X.shape[0]}, D = {X.shape[1]}, {args.threads} threads")
    for method in args.methods:  # warm-up: compiled kernels, extensions, imports
        fit(method, X, args.seed, args.threads)
    seconds: dict[str, list[float]] = {m: [] for m in args.methods}
    print(f"{'round':>5}  {'method':<9} {'seconds':>8}  {'1-NN error':>10}")
    for r in range(args.rounds):
        for method in args.methods if r % 2 == 0 else args.methods[::-1]:
            started = time.perf_counter()
            Y = fit(method, X, args.seed + r, args.threads)
            seconds[method].append(time.perf_counter() - started)
            error = nn1_error(Y, labels)
            print(f"{r:>5}  {method:<9} {seconds[method][-1]:>8.2f}  {error:>10.4f}", flush=True)
    median = {m: float(np.median(t)) for m, t in seconds.items()}
    if "opentsne" in median:
        for method in (m for m in args.methods if m != "opentsne"):
            print(f"{method} / openTSNE wall time (medians of {args.rounds}): "
                  f"{median[method]:.2f} / {median['opentsne']:.2f} s = "
                  f"x{median[method] / median['opentsne']:.2f}")


if __name__ == "__main__":
    main()
