"""Accuracy and per-epoch time of the FFT-accelerated repulsion against the exact kernel.

For each output kernel (t-SNE R^1 and R^2, SNE R^2 -- also EE with uniform v-, same fields --,
SNEST R^{1,1} and R^{2,1}), two kinds of maps at size n (random: one Gaussian blob;
clustered: 10 Gaussian clusters) with the extents of real maps (space radius ~ sqrt(n) / 1.5
for t-SNE and SNEST, a fifth of it for SNE, whose maps are compact; SNEST time std 0.5,
|t| < 2), and each grid setting (p = ``n_interpolation_points``, ``nodes_per_unit``),
prints against :func:`embedlab.kernels.neighbour.pair_fields`:

* ``Z``: |Z_fft / Z_exact - 1| (Z = M e^c);
* ``rep``: relative L2 error of the repulsive gradient term R / M (n x d, all entries):
  ||R_fft/M_fft - R/M||_2 / ||R/M||_2 -- the part the approximation changes;
* ``grad``: relative L2 error of the whole KL gradient 4 (A - R / M) at these points;
* the padded grid size prod L_k and the time of one objective call (cost + gradient, the
  optimiser's epoch) exact and fft: ``fft s`` with the kernel's spectrum kept from the call
  before (an epoch whose grid did not change, the common case), ``cold s`` without it.

A setting whose padded grid exceeds ``--max-grid-points`` is reported as such (the library
would compute that call exactly). Timings are wall clock, minimum over ``--repeats``.

    python benchmarks/bench_ne_fft.py --n 2000 --sweep
    python benchmarks/bench_ne_fft.py --n 5000 10000
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before numba starts its OpenMP threads

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from bench_ne_kernel import random_affinities  # noqa: E402  (this folder is on sys.path)
from timing import best_of  # noqa: E402

from embedlab.kernels import fft_repulsion as grid  # noqa: E402
from embedlab.kernels import interpolation  # noqa: E402
from embedlab.methods.neighbour_kl import NeighbourKL  # noqa: E402

# (label, kernel, n_space, n_time, space-scale factor)
CASES = [
    ("t-SNE R^1", "tsne", 1, 0, 1.0),
    ("t-SNE R^2", "tsne", 2, 0, 1.0),
    ("SNE R^2", "sne", 2, 0, 0.2),
    ("SNEST R^{1,1}", "snest", 1, 1, 1.0),
    ("SNEST R^{2,1}", "snest", 2, 1, 1.0),
]
# (p, nodes per unit)
SWEEP = [(3, 3.0), (4, 6.0), (4, 8.0), (5, 5.0), (6, 4.0), (6, 5.0), (6, 6.0), (7, 5.0), (8, 4.0),
         (8, 5.0), (8, 6.0), (10, 4.0)]
TIME_STD = 0.5


def make_map(kind: str, n: int, n_space: int, n_time: int, factor: float, rng) -> np.ndarray:
    """A map with a real map's extent: ``random`` (one blob) or ``clustered`` (10 blobs)."""
    radius = factor * np.sqrt(n) / 1.5
    scale = np.r_[np.full(n_space, radius), np.full(n_time, TIME_STD)]
    if kind == "random":
        return rng.normal(size=(n, n_space + n_time)) * scale / 2.5
    centres = rng.uniform(-1, 1, size=(10, n_space + n_time)) * scale
    spread = np.r_[np.full(n_space, radius / 15), np.full(n_time, TIME_STD / 4)]
    return centres[rng.integers(0, 10, n)] + rng.normal(size=(n, n_space + n_time)) * spread


def cold(objective, Y):
    """One objective call without the kept kernel spectrum (a call whose grid changed)."""
    grid._SPECTRUM.clear()
    return objective(Y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[2000])
    parser.add_argument("--kinds", nargs="+", default=["random", "clustered"])
    parser.add_argument("--cases", nargs="+", default=[c[0] for c in CASES])
    parser.add_argument("--sweep", action="store_true", help="every grid setting of SWEEP")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-grid-points", type=int, default=2**25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    default = grid.FFTSettings()
    settings = [(default.n_interpolation_points, default.nodes_per_unit)]
    if args.sweep:
        settings = SWEEP
    print(f"default grid: p = {default.n_interpolation_points}, nodes_per_unit = "
          f"{default.nodes_per_unit}, min_grid_size = {default.min_grid_size}")
    print(f"{'case':14s} {'map':9s} {'n':>6s} {'p':>2s} {'npu':>4s} {'cells':>15s} "
          f"{'grid':>9s} {'Z':>8s} {'rep':>8s} {'grad':>8s} {'exact s':>8s} {'fft s':>8s} "
          f"{'cold s':>8s}")
    for n in args.n:
        rng = np.random.default_rng(args.seed + n)
        P = random_affinities(n, 15, rng)
        for label, kernel, n_space, n_time, factor in CASES:
            if label not in args.cases:
                continue
            exact = NeighbourKL(P, kernel, n_space)
            for kind in args.kinds:
                Y = make_map(kind, n, n_space, n_time, factor, rng)
                f_exact = exact.fields(Y)
                t_exact, (_, g_exact) = best_of(lambda: exact(Y), args.repeats)  # noqa: B023
                rep_exact = f_exact.rep / f_exact.mass
                for p, npu in settings:
                    s = grid.FFTSettings(n_interpolation_points=p, nodes_per_unit=npu,
                                         max_grid_points=args.max_grid_points)
                    cells = grid.grid_cells(Y[:, :n_space], s)
                    size = interpolation.fft_points(cells, p)
                    shape = str(cells.tolist())
                    if n_time:  # SNEST: one space grid per Chebyshev time node
                        nodes = grid.time_nodes(Y[:, n_space], s).shape[0]
                        shape, size = f"{shape} x {nodes}t", size * nodes
                    head = (f"{label:14s} {kind:9s} {n:6d} {p:2d} {npu:4.1f} {shape:>15s} "
                            f"{size:9.2e}")
                    if interpolation.fft_points(cells, p) > args.max_grid_points:
                        print(f"{head} grid too large (exact fields)")
                        continue
                    approx = NeighbourKL(P, kernel, n_space, repulsion="fft", fft=s)
                    f = approx.fields(Y)
                    t_fft, (_, g) = best_of(lambda: approx(Y), args.repeats)  # noqa: B023
                    t_cold, _ = best_of(lambda: cold(approx, Y), args.repeats)  # noqa: B023
                    z_err = abs(np.expm1(np.log(f.mass) + f.shift
                                         - np.log(f_exact.mass) - f_exact.shift))
                    rep_err = np.linalg.norm(f.rep / f.mass - rep_exact) / np.linalg.norm(rep_exact)
                    g_err = np.linalg.norm(g - g_exact) / np.linalg.norm(g_exact)
                    print(f"{head} {z_err:8.1e} {rep_err:8.1e} {g_err:8.1e} "
                          f"{t_exact:8.3f} {t_fft:8.3f} {t_cold:8.3f}", flush=True)


if __name__ == "__main__":
    main()
