"""The attraction of the FFT path (sparse P) against the exact kernel's row loop, in one run.

Both add the forces A_i over the non-zeros of P in the same order (equal to rounding: the
FFT path's row divides where the exact kernel runs a Newton reciprocal; the last column
says whether they give the same bits); they differ in the cost
sum_ij p_ij (-log w_ij): the exact kernel's row (:func:`embedlab.kernels.neighbour.
_attraction_row`) calls libm's scalar log1p inside the gather loop, the FFT path's
(:func:`embedlab.kernels.neighbour_fft._attraction_row`) keeps the squared distances and
sums the terms afterwards with the vectorised :func:`embedlab.kernels.fastmath.fast_log1p64`.
P: the scale experiment's (``results/embeddings/scale/affinities.npz``, 70,000 MNIST digits)
when it exists, else a random k-nearest-neighbour P of clustered points; Y: random.

    NUMBA_NUM_THREADS=2 .venv/bin/python benchmarks/bench_attraction.py [--n 20000]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from numba import njit, prange
from timing import best_of

from embedlab.kernels import neighbour as exact
from embedlab.kernels import neighbour_fft
from embedlab.kernels.fastmath import FASTMATH
from embedlab.kernels.output_kernels import SNEST, TSNE

SCALE_P = Path("results/embeddings/scale/affinities.npz")


@njit(parallel=True, cache=True, fastmath=FASTMATH)
def libm_attraction(kernel, Y, n_space, indptr, indices, pvals):
    """The exact kernel's row loop over every row (cost terms with libm's log1p)."""
    n, d = Y.shape
    att = np.zeros((n, d))
    cost_row = np.zeros(n)
    for i in prange(n):
        cost_row[i] = exact._attraction_row(kernel, i, Y, n_space, indptr, indices, pvals, att)
    return cost_row.sum(), att


def load_p(n: int):
    if SCALE_P.exists():
        from embedlab.experiments.scale.affinities import load_affinities

        return load_affinities(SCALE_P)[0]["P"], f"{SCALE_P} (MNIST)"
    from embedlab.knn_affinities import knn_affinities

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 10)) + 4 * rng.integers(0, 10, size=(n, 1))
    return knn_affinities(X, perplexity=30.0, pca_dims=None, seed=0).P, "clustered, random"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="points when no scale P exists")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    P, source = load_p(args.n)
    Y = np.random.default_rng(1).normal(size=(P.shape[0], 3)) * 30
    print(f"P: {source}, n = {P.shape[0]}, nnz = {P.nnz}")
    print("kernel | libm row loop ms | FFT path ms | ratio | |d cost| / cost "
          "| max |dA| / max |A| | forces equal")
    for name, kernel, n_space in (("t-SNE R^2", TSNE, 2), ("SNEST R^{2,1}", SNEST, 2)):
        Yk = np.ascontiguousarray(Y[:, : n_space + (kernel == SNEST)])
        parts = (kernel, Yk, n_space, P.indptr, P.indices, P.data)
        libm_attraction(*parts)
        neighbour_fft._attraction_parallel(*parts)
        t_libm, (c_libm, a_libm) = best_of(lambda: libm_attraction(*parts), args.repeats)  # noqa: B023
        t_fft, (c_fft, a_fft) = best_of(
            lambda: neighbour_fft._attraction_parallel(*parts), args.repeats  # noqa: B023
        )
        print(f"{name} | {1e3 * t_libm:.1f} | {1e3 * t_fft:.1f} | {t_libm / t_fft:.2f}x"
              f" | {abs(c_fft - c_libm) / abs(c_libm):.1e}"
              f" | {np.abs(a_fft - a_libm).max() / np.abs(a_libm).max():.1e}"
              f" | {np.array_equal(a_fft, a_libm)}")


if __name__ == "__main__":
    main()
