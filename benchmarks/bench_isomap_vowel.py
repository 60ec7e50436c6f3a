"""Why Isomap's vowel errors are not the paper's 458: the neighbourhood size and the graph.

The Diffeomap paper quotes Isomap's 458 leave-one-out 1-NN errors on vowel (2-D map) from
Lawrence & Quinonero-Candela (2006), whose toolbox embeds with Tenenbaum's Isomap at k = 7
neighbours (GPmat ``isomapEmbed``: ``neighbours = 7``; a point outside the graph's largest
connected component is left at the origin). The workflow's Isomap baseline is scikit-learn's
at ``diffeomap.isomap_neighbors`` (10), which joins a disconnected graph's components before
the shortest paths. For each k this prints the k-NN graph's connected components (the graph
symmetrised as both implementations do), the largest component's size, and the LOO 1-NN
errors of scikit-learn's 2-D Isomap on all points, then of the same embedding restricted to
the largest component with every other point at the origin (the toolbox's handling), both
with the criterion the tables use (:func:`embedlab.evaluate.knn.loo_1nn_errors`).

    python benchmarks/bench_isomap_vowel.py --artifact results/datasets/vowel --k 5 7 10 15
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.sparse.csgraph import connected_components

from embedlab import artifacts
from embedlab.evaluate.knn import loo_1nn_errors


def components(X: np.ndarray, k: int) -> np.ndarray:
    """Component label of each point in the symmetrised k-NN graph of X."""
    from sklearn.neighbors import kneighbors_graph

    graph = kneighbors_graph(X, k, mode="connectivity", include_self=False)
    return connected_components(graph, directed=False)[1]


def isomap(X: np.ndarray, k: int) -> np.ndarray:
    """scikit-learn's 2-D Isomap of X (a disconnected graph joined, its warning silenced)."""
    from sklearn.manifold import Isomap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Isomap(n_neighbors=k, n_components=2).fit_transform(X)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifact", default="results/datasets/vowel")
    parser.add_argument("--k", type=int, nargs="+", default=[5, 6, 7, 8, 10, 12, 15, 20])
    args = parser.parse_args()
    art = artifacts.load(args.artifact)
    X = np.asarray(art.arrays["X"], dtype=np.float64)
    labels = np.asarray(art.arrays["labels"])
    print(f"{args.artifact}: {X.shape[0]} points x {X.shape[1]} dims")
    print("| k | components | largest | errors (joined graph) | errors (largest only) | s |")
    print("|---|---|---|---|---|---|")
    for k in args.k:
        t0 = time.perf_counter()
        comp = components(X, k)
        largest = np.bincount(comp).argmax()
        Y = isomap(X, k)
        joined = loo_1nn_errors(Y, labels)
        if np.all(comp == largest):
            alone = joined
        else:
            inside = comp == largest
            Z = np.zeros_like(Y)
            Z[inside] = isomap(X[inside], k)
            alone = loo_1nn_errors(Z, labels)
        print(
            f"| {k} | {comp.max() + 1} | {np.count_nonzero(comp == largest)} | {joined} "
            f"| {alone} | {time.perf_counter() - t0:.1f} |"
        )


if __name__ == "__main__":
    main()
